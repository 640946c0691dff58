import { expect } from "chai";
import { clusterNameProblem, MAX_CLUSTER_NAME } from "../../src/validate/names.js";

describe("validate/names: cluster names", () => {
  it("accepts lower-case labels that start with a letter, up to 52 characters", () => {
    expect(clusterNameProblem("team-a")).to.equal(undefined);
    expect(clusterNameProblem(`a${"b".repeat(MAX_CLUSTER_NAME - 1)}`)).to.equal(undefined);
  });
  it("refuses 53 characters: the StatefulSet's controller-revision-hash label would exceed 63", () => {
    expect(clusterNameProblem(`a${"b".repeat(MAX_CLUSTER_NAME)}`)).to.match(/53 characters long, over 52/);
  });
  it("refuses a leading digit (the name is also a Service name)", () => {
    expect(clusterNameProblem("1team")).to.match(/start with a letter/);
  });
  it("refuses what is not a DNS-1123 label", () => {
    expect(clusterNameProblem("Bad_Name")).to.match(/DNS-1123 label \(it has upper-case letters\)/);
    expect(clusterNameProblem("a-")).to.match(/starts or ends with '-'/);
  });
});
