// The host API server's addresses vc doctor judges NetworkPolicies against, read from EndpointSlices or Endpoints.
import { expect } from "chai";
import { apiServerEndpoints, apiServerSliceAddresses } from "../../src/ops/doctor/network.js";

describe("vc doctor: the host API server's addresses", () => {
  it("reads every ready address of the kubernetes Service's EndpointSlices with each port", () => {
    const slices = [
      {
        endpoints: [
          { addresses: ["192.0.2.10"], conditions: { ready: true } },
          { addresses: ["192.0.2.11"] },
          { addresses: ["192.0.2.12"], conditions: { ready: false } },
        ],
        ports: [{ name: "https", port: 6443 }],
      },
      { endpoints: [{ addresses: ["2001:db8::1"] }], ports: [{ port: 443 }, { name: "no-port" }] },
    ];
    expect(apiServerSliceAddresses(slices)).to.deep.equal([
      { ip: "192.0.2.10", port: 6443 },
      { ip: "192.0.2.11", port: 6443 },
      { ip: "2001:db8::1", port: 443 },
    ]);
    expect(apiServerSliceAddresses([{}])).to.deep.equal([]);
  });

  it("reads the same addresses from v1 Endpoints (servers without discovery.k8s.io/v1)", () => {
    const endpoints = { subsets: [{ addresses: [{ ip: "192.0.2.10" }], ports: [{ port: 6443 }] }] };
    expect(apiServerEndpoints(endpoints)).to.deep.equal([{ ip: "192.0.2.10", port: 6443 }]);
    expect(apiServerEndpoints(undefined)).to.deep.equal([]);
  });
});
