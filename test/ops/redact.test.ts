// Redaction helpers: scrubbing known secret values and their fragments, sanitizing objects, masking values.
import { expect } from "chai";
import fc from "fast-check";
import { sanitize, Scrubber } from "../../src/ops/redact.js";
import { maskValues } from "../../src/model/secrets.js";
import { effectiveValues } from "../../src/validate/values.js";

describe("ops/redact", () => {
  it("scrubs values, their base64 form and long fragments of structured values; leaves short words alone", () => {
    const s = new Scrubber();
    s.add("users:\n- name: a\n  user:\n    token: eyJhbGciOiJSUzI1NiJ9.payload\n");
    s.add("pw42");
    s.add("abc");
    s.add("client-certificate-data: Zm9vYmFyYmF6cXV4MTIz");
    expect(s.scrub("client-certificate-data: Zm9vYmFyYmF6cXV4MTIz and Zm9vYmFyYmF6cXV4MTIz")).to.equal("<masked> and <masked>");
    const text = `login with eyJhbGciOiJSUzI1NiJ9.payload and pw42 (${Buffer.from("pw42").toString("base64")}), abc stays, users stays`;
    expect(s.scrub(text)).to.equal("login with <masked> and <masked> (<masked>), abc stays, users stays");
  });

  it("masks credentials it does not know: JWTs, bearer tokens, URL passwords, values after password/token/secret", () => {
    const s = new Scrubber();
    const text = [
      "auth eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJlLXZhbHVl done",
      "Authorization: Bearer abcdef0123456789",
      "dsn postgres://vc:hunter2@db:5432/vc",
      "password=letmein token: tok-123456 connecting with token planted-value-1",
      "api_key = 'k-999999', tokens are short: ok",
    ].join("\n");
    expect(s.scrub(text, true).split("\n")).to.deep.equal([
      "auth <masked> done",
      "Authorization: Bearer <masked>",
      "dsn postgres://vc:<masked>@db:5432/vc",
      "password=<masked> token: <masked> connecting with token <masked>",
      "api_key = '<masked>', tokens are short: ok",
    ]);
    const yaml = "volumes:\n  - name: config\n    secret:\n      secretName: vc-config-team-a\nenv:\n  - name: API_TOKEN\n";
    expect(s.scrub(yaml, true)).to.equal(yaml);
    expect(s.scrub("Secret values are never collected")).to.equal("Secret values are never collected");
  });

  it("never leaves a known secret value (or its base64 form) in the text (property)", () => {
    const secret = fc.stringMatching(/^[A-Za-z0-9+/=._-]{8,40}$/).filter((v) => !"<masked>".includes(v));
    fc.assert(
      fc.property(secret, fc.array(fc.string(), { maxLength: 5 }), (value, parts) => {
        const s = new Scrubber();
        s.add(value);
        const text = [...parts, value, Buffer.from(value).toString("base64"), ...parts].join(" ");
        const out = s.scrub(text, true);
        return !out.includes(value) && !out.includes(Buffer.from(value).toString("base64"));
      }),
    );
  });

  it("sanitizes objects: no managedFields, no last-applied copy, secret-looking env masked, Secret data masked", () => {
    const out = sanitize({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p", managedFields: [{}], annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{...}", keep: "me" } },
      spec: { containers: [{ name: "c", env: [{ name: "DB_PASSWORD", value: "x1" }, { name: "LOG_LEVEL", value: "debug" }, { name: "API_TOKEN", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }] }] },
    });
    expect(out.metadata).to.deep.equal({ name: "p", annotations: { keep: "me" } });
    expect((out.spec as { containers: Array<{ env: unknown[] }> }).containers[0]!.env).to.deep.equal([
      { name: "DB_PASSWORD", value: "<masked>" },
      { name: "LOG_LEVEL", value: "debug" },
      { name: "API_TOKEN", valueFrom: { secretKeyRef: { name: "s", key: "k" } } },
    ]);
    expect(sanitize({ apiVersion: "v1", kind: "Secret", metadata: { name: "s" }, data: { a: "eA==" } }).data).to.deep.equal({ a: "<masked>" });
  });

  it("masks the database endpoint and secret-looking env values of the effective values, leaving the input intact", () => {
    const v = effectiveValues({
      controlPlane: {
        backingStore: { database: { external: { enabled: true, endpoint: "postgres://u:p@db/vc" } } },
        statefulSet: { env: [{ name: "DEBUG", value: "true" }, { name: "S3_SECRET", value: "k" }] },
      },
    });
    const m = maskValues(v);
    expect(m.controlPlane.backingStore.database.external.endpoint).to.equal("<masked>");
    expect(m.controlPlane.statefulSet.env).to.deep.equal([{ name: "DEBUG", value: "true" }, { name: "S3_SECRET", value: "<masked>" }]);
    expect(v.controlPlane.backingStore.database.external.endpoint).to.equal("postgres://u:p@db/vc");
  });
});
