import { expect } from "chai";
import { databaseTargets } from "../../src/validate/database-hosts.js";
import { loadAndValidate } from "../../src/validate/index.js";
import { formatDiagnostic } from "../../src/model/diagnostic.js";
import { cleanupRepos, makeRepo } from "./fixture.js";

describe("validate: every host a database client would try (database.hosts)", () => {
  after(cleanupRepos);

  it(
    "reads libpq's URI forms: several hosts, host and hostaddr parameters, encoded commas, IPv6 " + "brackets, ports",
    () => {
      const hosts = (url: string) => {
        const t = databaseTargets(url);
        expect(t.refusals, url).to.deep.equal([]);
        return t.hosts;
      };
      expect(hosts("postgres://vc@db1.allowed:5432/vc")).to.deep.equal(["db1.allowed"]);
      expect(hosts("postgres://evil,db1.allowed/x")).to.deep.equal(["evil", "db1.allowed"]);
      expect(hosts("postgresql://a:1,b:2,[2001:db8::1]:3/x")).to.deep.equal(["a", "b", "2001:db8::1"]);
      expect(hosts("postgres://db1.allowed/x?host=evil")).to.deep.equal(["evil", "db1.allowed"]);
      expect(hosts("postgres://db1.allowed/x?sslmode=require&hostaddr=10.0.0.9,10.0.0.8")).to.deep.equal([
        "10.0.0.9",
        "10.0.0.8",
        "db1.allowed",
      ]);
      expect(hosts("postgres:///x?host=db1.allowed")).to.deep.equal(["db1.allowed"]);
      expect(hosts("postgres://%65vil.com/x")).to.deep.equal(["evil.com"]);
      expect(hosts("postgres://db1.allowed%2Cevil/x")).to.deep.equal(["db1.allowed", "evil"]);
      expect(hosts("postgres://db1.allowed/x?HOST=evil")).to.deep.equal(["evil", "db1.allowed"]);
      expect(hosts("mysql://vc@db1.allowed:3306/vc?socket=evil")).to.deep.equal(["evil", "db1.allowed"]);
      expect(hosts("postgres://DB1.Allowed/x")).to.deep.equal(["db1.allowed"]);
    },
  );

  it("refuses what it cannot check: services, sockets, key=value strings, forms parsers read differently", () => {
    for (const url of [
      "host=evil dbname=x",
      "postgres://db1.allowed/x?service=prod",
      "postgres://db1.allowed/x?servicefile=/etc/pg",
      "postgres://%2Fvar%2Frun%2Fpostgresql/x",
      "postgres:///x?host=/var/run/postgresql",
      "postgres:///x",
      "postgres://a@b@db1.allowed/x",
      "postgres://db1.allowed#@evil/x",
      "postgres://u?x@evil/x",
      "postgres://db1.allowed\\@evil/x",
      "postgres://db1.allowed /x",
      "postgres://db1.allowed/x?dbname=postgres://evil/x",
      "postgres://db1.allowed/host%3Devil",
      "postgres://db1.allowed,,db2.allowed/x",
      "postgres://db1.allowed:port/x",
      "postgres://[::1/x",
      "postgres://evil%00.db1.allowed/x",
      "postgres://db%zz.allowed/x",
    ]) {
      expect(databaseTargets(url).refusals, url).to.not.deep.equal([]);
    }
  });

  it(
    "refuses a cluster whose endpoint reaches a host outside database.hosts however it is written, at the " +
      "endpoint's line",
    async () => {
      const values = (endpoint: string) =>
        `controlPlane:\n  backingStore:\n    kvstore:\n      embedded:\n        enabled: false\n    database:\n      ` +
        `external:\n        enabled: true\n        endpoint: "${endpoint}"\n`;
      const r = await loadAndValidate(
        makeRepo({
          "policy.yaml": 'database:\n  hosts: ["*.db.internal"]\n',
          "clusters/multi/values.yaml": values("postgres://evil.com,pg.db.internal/vc"),
          "clusters/query/values.yaml": values("postgres://pg.db.internal/vc?host=evil.com"),
          "clusters/addr/values.yaml": values("postgres://pg.db.internal/vc?hostaddr=10.1.2.3"),
          "clusters/service/values.yaml": values("postgres://pg.db.internal/vc?service=prod"),
          "clusters/good/values.yaml": values(
            "postgres://a.db.internal:5432,b.db.internal/vc?hostaddr=b.db.internal&sslmode=require",
          ),
        }),
      );
      expect(r.diagnostics.map(formatDiagnostic)).to.deep.equal([
        'clusters/addr/values.yaml:9:19: error: database host "10.1.2.3" is not allowed by the fleet policy (policy.yaml database.hosts: *.db.internal)',
        'clusters/multi/values.yaml:9:19: error: database host "evil.com" is not allowed by the fleet policy (policy.yaml database.hosts: *.db.internal)',
        'clusters/query/values.yaml:9:19: error: database host "evil.com" is not allowed by the fleet policy (policy.yaml database.hosts: *.db.internal)',
        "clusters/service/values.yaml:9:19: error: the database endpoint cannot be checked against the fleet policy " +
          "(policy.yaml database.hosts): the parameter service takes the hosts from a connection service file " +
          "outside the repository: write the hosts in the URL",
      ]);
    },
  );
});
