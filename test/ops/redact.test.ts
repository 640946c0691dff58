// Redaction helpers: scrubbing known secret values and their fragments, sanitizing objects, masking values.
import { expect } from "chai";
import fc from "fast-check";
import { credentialsOfSecret, sanitize, Scrubber } from "../../src/ops/redact.js";
import { maskValues } from "../../src/model/secrets.js";
import { effectiveValues } from "../../src/validate/values.js";

describe("ops/redact", () => {
  it("scrubs a credential and its base64 form, nothing shorter than 6 characters", () => {
    const s = new Scrubber();
    s.add("pw42-secret");
    s.add("admin");
    const text = `login with pw42-secret (${Buffer.from("pw42-secret").toString("base64")}), admin stays`;
    expect(s.scrub(text)).to.equal("login with <masked> (<masked>), admin stays");
  });

  it(
    "takes from a Secret its credentials only: what its type makes public, a kubeconfig's clusters and vc's " +
      "values stay readable",
    () => {
      const enc = (v: string) => Buffer.from(v).toString("base64");
      const creds = (type: string | undefined, data: Record<string, string>) =>
        credentialsOfSecret({ type, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, enc(v)])) });
      expect(
        creds("kubernetes.io/tls", {
          "tls.crt": "-----BEGIN CERTIFICATE-----\nQ0VSVElGSUNBVEUtQk9EWQ==\n-----END CERTIFICATE-----\n",
          "tls.key": "-----BEGIN PRIVATE KEY-----\nS0VZLUJPRFktTElORS0x\n-----END PRIVATE KEY-----\n",
        }),
      ).to.deep.equal([
        "-----BEGIN PRIVATE KEY-----\nS0VZLUJPRFktTElORS0x\n-----END PRIVATE KEY-----\n",
        "S0VZLUJPRFktTElORS0x",
      ]);
      expect(
        creds("kubernetes.io/service-account-token", { namespace: "vc-team-a", "ca.crt": "CA", token: "eyJ0b2tlbg" }),
      ).to.deep.equal(["eyJ0b2tlbg"]);
      expect(creds("kubernetes.io/basic-auth", { username: "postgres", password: "s3cret-pw" })).to.deep.equal([
        "s3cret-pw",
      ]);
      const kubeconfig =
        `apiVersion: v1\nkind: Config\nclusters:\n- name: vc\n  cluster:\n    server: ` +
        `https://team-a.vc-team-a.svc:443\nusers:\n- name: admin\n  user:\n    token: tok-0123456789\n    ` +
        `client-key-data: ` +
        `${enc("-----BEGIN EC PRIVATE KEY-----\nQUJDREVGR0hJSktMTU5PUA==\n-----END EC PRIVATE KEY-----\n")}\n`;
      const fromKubeconfig = creds(undefined, { config: kubeconfig });
      expect(fromKubeconfig).to.include("tok-0123456789").and.include("QUJDREVGR0hJSktMTU5PUA==");
      expect(fromKubeconfig.join("\n")).not.to.contain("team-a.vc-team-a.svc");
      const values = JSON.stringify({
        controlPlane: {
          statefulSet: {
            env: [
              { name: "LOG_LEVEL", value: "debug" },
              { name: "DB_PASSWORD", value: "env-pw-1" },
            ],
          },
          backingStore: {
            database: { external: { enabled: true, endpoint: "", endpointSecretRef: { name: "db", key: "endpoint" } } },
          },
        },
      });
      expect(creds(undefined, { "values.yaml": values })).to.deep.equal(["env-pw-1"]);
      // Any other value counts whole, with what the free-text rule finds inside it (a .env file's password, a URL's).
      expect(
        creds(undefined, { ".env": "DB_HOST=db\nDB_PASSWORD=Hunter2-x\nDSN=postgres://u:Pw-9@db/x\n" }),
      ).to.deep.equal([
        "DB_HOST=db\nDB_PASSWORD=Hunter2-x\nDSN=postgres://u:Pw-9@db/x\n",
        "Hunter2-x",
        "postgres://u:Pw-9@db/x",
      ]);
    },
  );

  it(
    "masks credentials it does not know in free text: JWTs, bearer tokens, URL passwords, private keys, values " +
      "named like credentials",
    () => {
      const s = new Scrubber();
      const text = [
        "auth eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJlLXZhbHVl done",
        "Authorization: Bearer abcdef0123456789",
        "dsn postgres://vc:hunter2@db:5432/vc",
        "connect postgres://vc:hunter2@db:5432/vc now",
        "password=letmein token: tok-123456 connecting with token planted-value-1",
        "api_key = 'k-999999', tokens are short: ok",
        'env DB_PASSWORD=x1y2z3 {"clientSecret":"abc-123","PGPASSWORD":"pg-pass"} use token x1y2z3w4v5',
        "-----BEGIN RSA PRIVATE KEY-----",
        "TUlJRXBBSUJBQUtDQVFFQTB6",
        "-----END RSA PRIVATE KEY-----",
      ].join("\n");
      expect(s.scrub(text, true).split("\n")).to.deep.equal([
        "auth <masked> done",
        "Authorization: Bearer <masked>",
        "dsn <masked>",
        "connect postgres://vc:<masked>@db:5432/vc now",
        "password=<masked> token: <masked> connecting with token <masked>",
        "api_key = '<masked>', tokens are short: ok",
        'env DB_PASSWORD=<masked> {"clientSecret":"<masked>","PGPASSWORD":"<masked>"} use token <masked>',
        "-----BEGIN RSA PRIVATE KEY-----",
        "<masked>",
        "-----END RSA PRIVATE KEY-----",
      ]);
      // Words that name a credential only with a qualifier, references to credentials, and prose stay as written.
      const plain = [
        "volumes:\n  - name: config\n    secret:\n      secretName: vc-config-team-a\nenv:\n  - name: API_TOKEN\n",
        'I1121 syncing secret="vc-team-a/vc-config" key="vc-team-a/team-a-0" endpoint=10.0.0.1:443 private=true',
        "password reset not needed; key rotation disabled; private network 10.0.0.0/8; secretKeyRef key=values.yaml",
        "Secret values are never collected",
      ];
      for (const p of plain) expect(s.scrub(p, true)).to.equal(p);
    },
  );

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
      metadata: {
        name: "p",
        managedFields: [{}],
        annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{...}", keep: "me" },
      },
      spec: {
        containers: [
          {
            name: "c",
            env: [
              { name: "DB_PASSWORD", value: "x1" },
              { name: "LOG_LEVEL", value: "debug" },
              { name: "API_TOKEN", valueFrom: { secretKeyRef: { name: "s", key: "k" } } },
            ],
          },
        ],
      },
    });
    expect(out.metadata).to.deep.equal({ name: "p", annotations: { keep: "me" } });
    expect((out.spec as { containers: Array<{ env: unknown[] }> }).containers[0]!.env).to.deep.equal([
      { name: "DB_PASSWORD", value: "<masked>" },
      { name: "LOG_LEVEL", value: "debug" },
      { name: "API_TOKEN", valueFrom: { secretKeyRef: { name: "s", key: "k" } } },
    ]);
    expect(
      sanitize({ apiVersion: "v1", kind: "Secret", metadata: { name: "s" }, data: { a: "eA==" } }).data,
    ).to.deep.equal({ a: "<masked>" });
    expect(
      sanitize({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "p" },
        spec: { args: ["--db=postgres://u:pw-1@db/x", "--v=4"] },
      }).spec,
    ).to.deep.equal({ args: ["--db=postgres://u:<masked>@db/x", "--v=4"] });
  });

  it(
    "masks the database endpoint and secret-looking env values of the effective values, leaving the " + "input intact",
    () => {
      const v = effectiveValues({
        controlPlane: {
          backingStore: { database: { external: { enabled: true, endpoint: "postgres://u:p@db/vc" } } },
          statefulSet: {
            env: [
              { name: "DEBUG", value: "true" },
              { name: "S3_SECRET", value: "k" },
            ],
          },
        },
      });
      const m = maskValues(v);
      expect(m.controlPlane.backingStore.database.external.endpoint).to.equal("<masked>");
      expect(m.controlPlane.statefulSet.env).to.deep.equal([
        { name: "DEBUG", value: "true" },
        { name: "S3_SECRET", value: "<masked>" },
      ]);
      expect(v.controlPlane.backingStore.database.external.endpoint).to.equal("postgres://u:p@db/vc");
    },
  );
});
