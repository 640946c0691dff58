import { expect } from "chai";
import {
  credentialsDeep,
  credentialsInText,
  isCredentialEnvName,
  isCredentialName,
  isSecretValuesPath,
  maskCredentialsDeep,
  maskCredentialsInText,
  SECRET_ENV_NAME,
  valuesCredentials,
} from "../../src/model/secrets.js";
import { validateValuesDocument } from "../../src/validate/values.js";

describe("model/secrets: which configuration values are credentials", () => {
  const doc = {
    controlPlane: {
      statefulSet: {
        env: [{ name: "DEBUG", value: "true" }, { name: "DB_PASSWORD", value: "x" }, { value: "no name" }],
      },
      backingStore: { database: { external: { endpoint: "postgres://u:p@db" } } },
    },
  };
  const env = (i: number) => ["controlPlane", "statefulSet", "env", i, "value"];

  it("is the external database endpoint, and env values whose name looks secret (or is missing)", () => {
    expect(isSecretValuesPath(doc, ["controlPlane", "backingStore", "database", "external", "endpoint"])).to.equal(
      true,
    );
    expect(isSecretValuesPath(doc, env(1))).to.equal(true);
    expect(isSecretValuesPath(doc, env(2))).to.equal(true);
    expect(isSecretValuesPath(doc, env(0))).to.equal(false);
    expect(isSecretValuesPath(doc, ["controlPlane", "statefulSet", "env", 0, "name"])).to.equal(false);
  });

  it("applies to validation messages: a secret value is masked, an ordinary one is shown", () => {
    const text =
      "controlPlane:\n  statefulSet:\n    env:\n      - name: DEBUG\n        value: 1234\n      - name: " +
      "API_TOKEN\n        value: 98765\n";
    const messages = validateValuesDocument(text, "clusters/a/values.yaml").map((d) => d.message);
    expect(messages).to.have.length(2);
    expect(messages[0]).to.contain("1234");
    expect(messages[1]).to.contain("<masked>").and.not.contain("98765");
  });

  it(
    "names a credential in free text by the same words as env names: the last word decides, a bare " +
      "key/secret/auth/endpoint does not",
    () => {
      for (const name of [
        "DB_PASSWORD",
        "password",
        "passwd",
        "PGPASSWORD",
        "apiToken",
        "x-auth-token",
        "clientSecret",
        "SECRET_KEY",
        "api_key",
        "privateKey",
        "DSN",
        "credentials",
      ]) {
        expect(isCredentialName(name), name).to.equal(true);
        expect(SECRET_ENV_NAME.test(name), name).to.equal(true);
      }
      for (const name of [
        "key",
        "secret",
        "auth",
        "endpoint",
        "private",
        "secretName",
        "secretKeyRef",
        "tokenFile",
        "keyPath",
        "monkeyBusiness",
        "LOG_LEVEL",
        "Authorization",
      ]) {
        expect(isCredentialName(name), name).to.equal(false);
      }
    },
  );

  it("finds the credentials of a text and of a values document (what the masks hide)", () => {
    expect(credentialsInText("DB_PASSWORD=hunter2x url=postgres://u:pw-9@db/x key=ns/name")).to.deep.equal([
      "hunter2x",
      "pw-9",
    ]);
    expect(valuesCredentials(doc)).to.deep.equal(["x", "no name", "postgres://u:p@db", "p"]);
  });
});

describe("model/secrets: credentials recognised by their shape, in text and in every field of an object", () => {
  // Each planted credential is in the text exactly once; the text must not hold it after masking.
  const shapes: Array<[string, string, string]> = [
    ["URL userinfo", "redis://cache:R3dis-pw-91@redis:6379/0", "R3dis-pw-91"],
    ["key=value", "DB_PWD=pwd-Plant-01 started", "pwd-Plant-01"],
    ["key: value", "MYSQL_PW: mysqlPw-02x", "mysqlPw-02x"],
    ["JWT name", "JWT=jwtvalue-abc03", "jwtvalue-abc03"],
    ["signature abbreviation", "SESSION_COOKIE_SIG=sig-cookie-04", "sig-cookie-04"],
    ["signed URL query", "https://store.example/blob?sv=2022&sig=azSig05Q%3D&se=2030", "azSig05Q%3D"],
    ["--flag=value", "/app --db-pass=flagPass-06 --verbose", "flagPass-06"],
    ["--flag value", "/app --token tokArg-07 --port 80", "tokArg-07"],
    [
      "Password= in a connection string",
      "Server=db.internal;User Id=sa;Password=Conn-Str-08;Encrypt=true",
      "Conn-Str-08",
    ],
    ["Pwd= in an ODBC string", "Driver={PostgreSQL};Server=db;Uid=app;Pwd=odbcPw-09;", "odbcPw-09"],
    [
      "PEM private key",
      "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA10\n-----END OPENSSH PRIVATE KEY-----",
      "b3BlbnNzaC1rZXktdjEAAAAA10",
    ],
    [
      "PGP private key",
      "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBGPgpPrivate11xx\n-----END PGP PRIVATE KEY BLOCK-----",
      "lQOYBGPgpPrivate11xx",
    ],
    [
      "JWT alone",
      "token header eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnMTItand0LXNpZw",
      "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnMTItand0LXNpZw",
    ],
    ["AWS access key", "aws configure set id AKIAIOSFODNN7PLANT13", "AKIAIOSFODNN7PLANT13"],
    ["AWS session key", "sts gave ASIAY34FZKBOKMUTVV14", "ASIAY34FZKBOKMUTVV14"],
    ["GitHub token", "clone with ghp_0123456789abcdefghijABCDEFGHIJ012345", "ghp_0123456789abcdefghijABCDEFGHIJ012345"],
    [
      "GitHub fine-grained token",
      "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz16",
      "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz16",
    ],
    ["GitLab token", "glpat-Ab1Cd2Ef3Gh4Ij5Kl6Mn17", "glpat-Ab1Cd2Ef3Gh4Ij5Kl6Mn17"],
    ["Slack token", "notify xoxb-123456789012-1234567890-slack18x", "xoxb-123456789012-1234567890-slack18x"],
    ["Stripe key", "charge via sk_live_51Hstripe0123456789AB", "sk_live_51Hstripe0123456789AB"],
    ["Google API key", "maps AIzaSyA-0123456789abcdefghijklmnopqrstu", "AIzaSyA-0123456789abcdefghijklmnopqrstu"],
    ["Vault token", "vault hvs.CAESIVaultTokenPlanted21xyz", "hvs.CAESIVaultTokenPlanted21xyz"],
    ["Bearer", "Authorization: Bearer bearer-0123-abcd", "bearer-0123-abcd"],
    // Issue #38 case 10: shapes the hand-grown list missed.
    ["a token as a URL's user", "git clone https://f00dTok3nAsUser9@git.example.com/org/a.git", "f00dTok3nAsUser9"],
    [
      "a Slack webhook URL",
      "post to https://hooks.slack.com/services/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",
      "PlantedWebhookSecret0123",
    ],
    [
      "a DigitalOcean token",
      "doctl auth init -t dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    ],
    [
      "a private_key_id",
      '{"type":"service_account","private_key_id":"9f8e7d6c5b4a39281706f5e4d3c2b1a0"}',
      "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    ],
    ["a Cookie header", "GET / HTTP/1.1\nCookie: session=PlantCookie0042; theme=dark\n", "PlantCookie0042"],
    ["a session in an event", "login refused for session 7f3a9c1e5b2d4f60 from 10.0.0.4", "7f3a9c1e5b2d4f60"],
    [
      "an npm token, every character",
      "token npm_abcdefghijklmnopqrstuvwxyz0123456789AB end",
      "npm_abcdefghijklmnopqrstuvwxyz0123456789AB",
    ],
    ["an .npmrc auth token", "//registry.npmjs.org/:_authToken=PlantedNpmrc-0043", "PlantedNpmrc-0043"],
  ];
  for (const [what, text, secret] of shapes) {
    it(`masks ${what}`, () => {
      const masked = maskCredentialsInText(text);
      expect(masked, masked).not.to.contain(secret);
      expect(masked).to.contain("<masked>");
      expect(credentialsInText(text).join("\n")).to.contain(secret);
    });
  }

  it("keeps ordinary text readable: names, namespaces, image tags, IPs, paths, references, prose", () => {
    const plain = [
      "image: registry.example/team/token-service:v1.2.3",
      "image: ghcr.io/org/secret:2024.01",
      "pod team-a-0 in namespace vc-team-a on 10.0.0.12:6443 (node 192.168.1.5)",
      "--tls-private-key-file=/etc/vc/tls.key --client-ca-file=/etc/vc/ca.crt --authorization-mode=Node,RBAC",
      "--password=$(DB_PASSWORD) --token=${API_TOKEN} --enable-token-auth=true",
      "SIGTERM received; signal handler DESIGN_DOC=upward PWD_FILE=/run/pw",
      "the --token flag names a file; see --password docs",
      "checksum/secret: 3f2a sessionAffinity: ClientIP",
      "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2VydGlmaWNhdGU=\n-----END CERTIFICATE-----",
      "fetch ssh://git@github.com/org/repo and https://deploy-bot@git.example.com/org/repo",
      "volume pvc-3f2a9c1e-1b2c-4d5e-8f90-123456789abc of pod web-7d9f8c6b5-x2k4p, kube-root-ca.crt",
      "image ghcr.io/org/app@sha256:0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
      "host vc-metrics-proxy-a-x-x-b, service shop-x-default-x-shop.vc-shop.svc.cluster.local",
    ];
    for (const p of plain) expect(maskCredentialsInText(p), p).to.equal(p);
  });

  it("names a credential by an abbreviation only as a whole word", () => {
    for (const name of [
      "DB_PWD",
      "MYSQL_PW",
      "JWT",
      "SESSION_COOKIE_SIG",
      "--db-pass",
      "dbPwd",
      "webhookSignature",
      "ADMIN_CREDS",
      "passphrase",
    ])
      expect(isCredentialName(name), name).to.equal(true);
    for (const name of ["SIGNAL", "DESIGN", "UPWARD", "PWD_FILE", "jwtIssuer", "sigterm"])
      expect(isCredentialName(name), name).to.equal(false);
    expect(isCredentialEnvName("DB_PWD")).to.equal(true);
    expect(isCredentialEnvName("SIGNAL_HANDLER")).to.equal(false);
  });

  it(
    "masks every string field of an object: annotations, args, env under any credential name, event messages; the " +
      "rest as written",
    () => {
      const pod = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name: "team-a-0",
          namespace: "vc-team-a",
          annotations: {
            "vault.hashicorp.com/agent-inject-token": "s.injector-Tok-1",
            "checksum/secret": "3f2a91",
            note: "rotate with token tk-0123456789",
          },
        },
        spec: {
          containers: [
            {
              name: "syncer",
              image: "ghcr.io/org/secret:2024.01",
              args: ["--db-pass=argPass-2", "--token", "argTok-3", "--verbose", "--key-id", "AKIAIOSFODNN7PLANT22"],
              env: [
                { name: "DB_PWD", value: "envPwd-4" },
                { name: "JWT", value: "envJwt-5" },
                { name: "MYSQL_PW", value: "envMysql-6" },
                { name: "SESSION_COOKIE_SIG", value: "envSig-7" },
                { name: "CONN", value: "Host=db;Username=app;Password=envConn-8;" },
                { name: "LOG_LEVEL", value: "debug" },
              ],
            },
          ],
        },
      };
      const masked = JSON.stringify(maskCredentialsDeep(pod));
      for (const s of [
        "injector-Tok-1",
        "tk-0123456789",
        "argPass-2",
        "argTok-3",
        "AKIAIOSFODNN7PLANT22",
        "envPwd-4",
        "envJwt-5",
        "envMysql-6",
        "envSig-7",
        "envConn-8",
      ]) {
        expect(masked, s).not.to.contain(s);
      }
      for (const s of [
        "team-a-0",
        "vc-team-a",
        "ghcr.io/org/secret:2024.01",
        "3f2a91",
        "--verbose",
        "debug",
        "Host=db;Username=app;Password=<masked>;",
      ])
        expect(masked, s).to.contain(s);
      expect(credentialsDeep(pod)).to.include.members(["s.injector-Tok-1", "argTok-3", "envConn-8", "envPwd-4"]);
    },
  );

  it("in a diff, a credential that changed shows as changed on both sides, an equal one alike", () => {
    const live = { env: [{ name: "DB_PWD", value: "old-1" }], args: ["--token", "same-2"], note: "Password=old-3;x" };
    const desired = {
      env: [{ name: "DB_PWD", value: "new-1" }],
      args: ["--token", "same-2"],
      note: "Password=new-3;x",
    };
    expect(maskCredentialsDeep(desired, live, "<masked, changed>")).to.deep.equal({
      env: [{ name: "DB_PWD", value: "<masked, changed>" }],
      args: ["--token", "<masked>"],
      note: "Password=<masked, changed>;x",
    });
    expect(maskCredentialsDeep(live, desired, "<masked, before>")).to.deep.equal({
      env: [{ name: "DB_PWD", value: "<masked, before>" }],
      args: ["--token", "<masked>"],
      note: "Password=<masked, before>;x",
    });
  });
});
