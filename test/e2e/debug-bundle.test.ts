// vc debug collect on a real API server with credentials planted where operators and injectors put them (pod and
// Service annotations, container args, env values under any credential name, event messages): the extracted bundle
// holds none of them, and what is not a credential (names, namespaces, image tags, addresses) reads as written.
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useRealKube } from "../support/real-kube.js";
import { runVc } from "../support/vc.js";

const NS = "vc-leaky";

/** Each credential planted on the host, by where it was put. */
const PLANTED = {
  injectorToken: "hvs.PlantedInjectorToken0001xyz",
  injectorToken2: "inj-tok-plant-02",
  annotationPassword: "plantPw-03",
  argDbPass: "plantDbPass-04",
  argToken: "plantArgTok-05",
  argAwsKeyId: "AKIAPLANTED000000006",
  argAwsSecret: "plantAwsSecret07/abc+def",
  shellGithubToken: "ghp_Planted0000000000000000000000000008",
  envDbPwd: "plantPwd-09",
  envJwt: "plantJwt-10",
  envMysqlPw: "plantMysql-11",
  envCookieSig: "plantSig-12",
  envConnString: "plantConn-13",
  envUrlPassword: "plantUrl-14",
  eventToken: "plantEvtTok-15",
  eventBearer: "plantBearer-16x",
  eventSlack: "xoxb-1234567890-plantSlack17",
  serviceApiKey: "plantSvcKey-18",
  serviceUrlPassword: "plantSvcUrl-19",
  serviceGitlab: "glpat-Plant20Plant20Plant20",
  podPem: "UGxhbnRQZW0yMVBsYW50UGVtMjE=",
  serviceStripe: "sk_live_Plant22Plant22Plant22",
  stsArgPassword: "plantStsPw-23",
  stsEnvPw: "plantStsEnv-24",
  // Issue #38 case 10: the shapes the hand-grown list missed, and more of the kinds a kept rule set knows.
  repoUserToken: "f00dTok3nAsUser25",
  slackWebhook: "https://hooks.slack.com/services/T0PLANT26/B0PLANT26/PlantWebhook26Secret01",
  digitalOcean: "dop_v1_2727272727272727272727272727272727272727272727272727272727272727",
  gcpKeyId: "9f8e7d6c5b4a39281706f5e4d3c2b1a28",
  cookie: "PlantCookie29Value",
  eventSession: "7f3a9c1e5b2d4f30",
  npmLong: "npm_Plant31Plant31Plant31Plant31Plant31x",
  npmrcToken: "PlantNpmrc-32",
  openAi: "sk-proj-Plant33Plant33Plant33Plant33Plant33",
  basicHeader: "UGxhbnQzNDpwYXNzd29yZA==",
  sentryDsnKey: "PlantDsnKey35abcdef",
  apiKeyHeader: "PlantApiKey36-abc",
  anthropic: "sk-ant-api03-Plant37Plant37Plant37Plant37Plant37Plant37Plant37Plant37Plant37Plant37Plant37Plant37AA",
};

const container = (name: string) => ({
  name,
  image: "ghcr.io/example/syncer:v0.19.4",
  args: [
    `--db-pass=${PLANTED.argDbPass}`,
    "--token",
    PLANTED.argToken,
    `--aws-access-key-id=${PLANTED.argAwsKeyId}`,
    "--aws-secret-access-key",
    PLANTED.argAwsSecret,
    "--log-level=4",
    "--service-cidr=10.96.0.0/12",
  ],
  command: ["sh", "-c", `exec /syncer --api-key ${PLANTED.shellGithubToken} --name leaky`],
  env: [
    { name: "DB_PWD", value: PLANTED.envDbPwd },
    { name: "JWT", value: PLANTED.envJwt },
    { name: "MYSQL_PW", value: PLANTED.envMysqlPw },
    { name: "SESSION_COOKIE_SIG", value: PLANTED.envCookieSig },
    { name: "CONN", value: `Server=db.leaky.svc;User Id=sa;Password=${PLANTED.envConnString};Encrypt=true` },
    { name: "DATABASE_URL", value: `postgres://app:${PLANTED.envUrlPassword}@db.leaky.svc:5432/app` },
    { name: "DOCTL_ARGS", value: `-t ${PLANTED.digitalOcean}` },
    { name: "NPM_CONFIG_USERCONFIG_TEXT", value: `//registry.npmjs.org/:_authToken=${PLANTED.npmrcToken}` },
    { name: "SENTRY", value: `https://${PLANTED.sentryDsnKey}@o0.ingest.example/1` },
    { name: "LOG_LEVEL", value: "debug" },
  ],
});

const event = (name: string, reason: string, message: string) => ({
  apiVersion: "v1",
  kind: "Event",
  metadata: { name, namespace: NS },
  involvedObject: { kind: "Pod", name: "leaky-0", namespace: NS },
  reason,
  message,
  type: "Warning",
  firstTimestamp: "2026-01-01T00:00:00Z",
  lastTimestamp: "2026-01-01T00:00:00Z",
  count: 1,
  source: { component: "kubelet" },
});

const HOST_OBJECTS = [
  { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } },
  {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "leaky", namespace: NS, labels: { app: "vcluster", release: "leaky" } },
    spec: {
      serviceName: "leaky",
      replicas: 1,
      selector: { matchLabels: { app: "vcluster", release: "leaky" } },
      template: {
        metadata: { labels: { app: "vcluster", release: "leaky" } },
        spec: {
          containers: [
            {
              ...container("syncer"),
              args: ["--password", PLANTED.stsArgPassword],
              env: [{ name: "ADMIN_PW", value: PLANTED.stsEnvPw }],
            },
          ],
        },
      },
    },
  },
  {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "leaky-0",
      namespace: NS,
      labels: { app: "vcluster", release: "leaky" },
      annotations: {
        "vault.hashicorp.com/agent-inject-token": PLANTED.injectorToken,
        "injector.example.com/token": PLANTED.injectorToken2,
        "example.com/startup": `connect with password=${PLANTED.annotationPassword}`,
        "example.com/ssh":
          `-----BEGIN OPENSSH PRIVATE KEY-----\n${PLANTED.podPem}\n-----END OPENSSH PRIVATE ` + `KEY-----\n`,
        "checksum/config": "4f1c2a9e",
        "example.com/repo": `https://${PLANTED.repoUserToken}@git.example.com/org/app.git`,
        "example.com/sa.json": `{"type":"service_account","private_key_id":"${PLANTED.gcpKeyId}"}`,
        "example.com/publish": `npm publish --registry r.example with ${PLANTED.npmLong}`,
      },
    },
    spec: { containers: [container("syncer")] },
  },
  {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: "leaky",
      namespace: NS,
      annotations: {
        "external-dns.alpha.kubernetes.io/api-key": PLANTED.serviceApiKey,
        "example.com/webhook": `https://hooks:${PLANTED.serviceUrlPassword}@hooks.example/notify`,
        "example.com/config": `GITLAB_TOKEN=${PLANTED.serviceGitlab}`,
        "billing.example.com/stripe": PLANTED.serviceStripe,
        "example.com/owner": "team-leaky",
        "example.com/alerts": PLANTED.slackWebhook,
        "example.com/llm": `OPENAI=${PLANTED.openAi} ANTHROPIC=${PLANTED.anthropic}`,
      },
    },
    spec: {
      clusterIP: "10.0.0.77",
      ports: [{ name: "https", port: 443, targetPort: 8443 }],
      selector: { app: "vcluster", release: "leaky" },
    },
  },
  event("leaky-0.pull", "Failed", `Failed to pull image: unauthorized: token=${PLANTED.eventToken}`),
  event("leaky-0.backoff", "BackOff", `container exited: request had Authorization: Bearer ${PLANTED.eventBearer}`),
  event("leaky-0.notify", "Notify", `auth failed for ${PLANTED.eventSlack} on 10.0.0.77:443`),
  event("leaky-0.cookie", "Probe", `probe sent Cookie: sid=${PLANTED.cookie}; path=/`),
  event("leaky-0.session", "Login", `login refused for session ${PLANTED.eventSession} from 10.0.0.4`),
  event("leaky-0.basic", "Probe", `probe sent Authorization: Basic ${PLANTED.basicHeader}`),
  event("leaky-0.apikey", "Probe", `probe sent x-api-key: ${PLANTED.apiKeyHeader}`),
];

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) =>
    statSync(join(dir, f)).isDirectory() ? filesUnder(join(dir, f)) : [join(dir, f)],
  );
}

describe("e2e: vc debug collect masks every planted credential", function () {
  this.timeout(120_000);
  const kube = useRealKube();
  let dir: string;
  let bundle: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "vc-e2e-debug-"));
    mkdirSync(join(dir, "repo"));
    for (const obj of HOST_OBJECTS) {
      const r = await kube().kubectl(["apply", "-f", "-"], { input: JSON.stringify(obj) });
      expect(r.code, r.stderr).to.equal(0);
    }
    const out = join(dir, "bundle.tar.gz");
    const r = await runVc([
      "debug",
      "collect",
      "leaky",
      "--namespace",
      NS,
      "--output-filename",
      out,
      "--kubeconfig",
      kube().kubeconfigPath,
      "--repo",
      join(dir, "repo"),
    ]);
    expect(r.code, r.stdout + r.stderr).to.equal(0);
    bundle = join(dir, "x");
    mkdirSync(bundle);
    execFileSync("tar", ["xzf", out, "-C", bundle]);
  });
  after(() => dir && rmSync(dir, { recursive: true, force: true }));

  it("the live host holds every planted credential (the test plants what it says)", async () => {
    const live = [
      (await kube().kubectl(["-n", NS, "get", "pods,statefulsets,services,events", "-o", "json"])).stdout,
    ].join("\n");
    for (const [where, value] of Object.entries(PLANTED)) expect(live, where).to.contain(value);
  });

  it("plants 37 credentials, as issue #38 did", () => expect(Object.keys(PLANTED)).to.have.length(37));

  it(
    `no file of the extracted bundle holds any of the ${Object.keys(PLANTED).length} planted credentials, nor ` +
      `their base64 forms`,
    () => {
      const files = filesUnder(join(bundle, "debug"));
      expect(files.map((f) => f.slice(bundle.length + 1)).sort()).to.include.members([
        "debug/pods.yaml",
        "debug/events.yaml",
        "debug/services.yaml",
        "debug/statefulset.yaml",
        "debug/summary",
      ]);
      const found: string[] = [];
      for (const file of files) {
        const text = readFileSync(file, "utf8");
        for (const [where, value] of Object.entries(PLANTED)) {
          if (text.includes(value) || text.includes(Buffer.from(value).toString("base64")))
            found.push(`${where} in ${file.slice(bundle.length + 1)}`);
        }
      }
      expect(found).to.deep.equal([]);
    },
  );

  it(
    "what is not a credential reads as written: names, namespace, image tag, addresses, flags, ordinary " +
      "annotations",
    () => {
      const read = (f: string) => readFileSync(join(bundle, "debug", f), "utf8");
      const pods = read("pods.yaml");
      for (const s of [
        "name: leaky-0",
        `namespace: ${NS}`,
        "image: ghcr.io/example/syncer:v0.19.4",
        "--log-level=4",
        "--service-cidr=10.96.0.0/12",
        "name: DB_PWD",
        "value: debug",
        "checksum/config: 4f1c2a9e",
        "vault.hashicorp.com/agent-inject-token: <masked>",
        "Password=<masked>;Encrypt=true",
        "--db-pass=<masked>",
      ]) {
        expect(pods, s).to.contain(s);
      }
      const services = read("services.yaml");
      expect(services)
        .to.contain("clusterIP: 10.0.0.77")
        .and.contain("example.com/owner: team-leaky")
        .and.contain("https://hooks:<masked>@hooks.example/notify");
      expect(read("events.yaml"))
        .to.contain("Failed to pull image: unauthorized: token=<masked>")
        .and.contain("on 10.0.0.77:443");
    },
  );
});
