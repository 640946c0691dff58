import { expect } from "chai";
import { credentialsInText, isCredentialName, isSecretValuesPath, SECRET_ENV_NAME, valuesCredentials } from "../../src/model/secrets.js";
import { validateValuesDocument } from "../../src/validate/values.js";

describe("model/secrets: which configuration values are credentials", () => {
  const doc = {
    controlPlane: {
      statefulSet: { env: [{ name: "DEBUG", value: "true" }, { name: "DB_PASSWORD", value: "x" }, { value: "no name" }] },
      backingStore: { database: { external: { endpoint: "postgres://u:p@db" } } },
    },
  };
  const env = (i: number) => ["controlPlane", "statefulSet", "env", i, "value"];

  it("is the external database endpoint, and env values whose name looks secret (or is missing)", () => {
    expect(isSecretValuesPath(doc, ["controlPlane", "backingStore", "database", "external", "endpoint"])).to.equal(true);
    expect(isSecretValuesPath(doc, env(1))).to.equal(true);
    expect(isSecretValuesPath(doc, env(2))).to.equal(true);
    expect(isSecretValuesPath(doc, env(0))).to.equal(false);
    expect(isSecretValuesPath(doc, ["controlPlane", "statefulSet", "env", 0, "name"])).to.equal(false);
  });

  it("applies to validation messages: a secret value is masked, an ordinary one is shown", () => {
    const text = "controlPlane:\n  statefulSet:\n    env:\n      - name: DEBUG\n        value: 1234\n      - name: API_TOKEN\n        value: 98765\n";
    const messages = validateValuesDocument(text, "clusters/a/values.yaml").map((d) => d.message);
    expect(messages).to.have.length(2);
    expect(messages[0]).to.contain("1234");
    expect(messages[1]).to.contain("<masked>").and.not.contain("98765");
  });

  it("names a credential in free text by the same words as env names: the last word decides, a bare key/secret/auth/endpoint does not", () => {
    for (const name of ["DB_PASSWORD", "password", "passwd", "PGPASSWORD", "apiToken", "x-auth-token", "clientSecret", "SECRET_KEY", "api_key", "privateKey", "DSN", "credentials"]) {
      expect(isCredentialName(name), name).to.equal(true);
      expect(SECRET_ENV_NAME.test(name), name).to.equal(true);
    }
    for (const name of ["key", "secret", "auth", "endpoint", "private", "secretName", "secretKeyRef", "tokenFile", "keyPath", "monkeyBusiness", "LOG_LEVEL", "Authorization"]) {
      expect(isCredentialName(name), name).to.equal(false);
    }
  });

  it("finds the credentials of a text and of a values document (what the masks hide)", () => {
    expect(credentialsInText("DB_PASSWORD=hunter2x url=postgres://u:pw-9@db/x key=ns/name")).to.deep.equal(["hunter2x", "pw-9"]);
    expect(valuesCredentials(doc)).to.deep.equal(["x", "no name", "postgres://u:p@db", "p"]);
  });
});
