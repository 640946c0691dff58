// Every host a database client would try for an external database URL, read the widest way any client reads it
// (libpq's URI rules first: several hosts, host/hostaddr parameters, percent-encoding, IPv6 brackets), or why vc
// cannot tell them (a connection service, a socket path, a form parsers disagree on).

/** What a connection URL reaches: the hosts to check, and the reasons it cannot be checked (then it is refused). */
export interface DatabaseTargets {
  hosts: string[];
  refusals: string[];
}

/** Query parameters that name a host to connect to (libpq's host and hostaddr; the names other drivers use). */
const HOST_PARAMS = new Set(["host", "hostaddr", "hosts", "server", "address", "addr", "socket", "unix_socket"]);
/** Query parameters that take the hosts from a file outside the repository (libpq's connection service file). */
const SERVICE_PARAMS = new Set(["service", "servicefile"]);

/** Percent-decoding as libpq does it (every part may be encoded); undefined for a broken escape. */
function decode(text: string): string | undefined {
  if (/%(?![0-9a-fA-F]{2})/.test(text)) return undefined;
  try {
    return decodeURIComponent(text);
  } catch {
    // Escapes that are not UTF-8 still decode to bytes in libpq; read them as Latin-1 (no host pattern matches them).
    return text.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  }
}

/** A database name that is itself a connection string (libpq expands such a dbname in some calls). */
const isConnectionString = (dbname: string): boolean => dbname.includes("=") || /^[a-z][a-z0-9+.-]*:\/\//i.test(dbname);

/**
 * The hosts a client would try for `endpoint`. The netloc may hold several `host[:port]` separated by commas (libpq
 * tries each; an encoded comma separates too, since libpq splits after decoding), `?host=` and `?hostaddr=` add more
 * (comma lists as well). Anything that would let a client reach a host this reading does not see is a refusal:
 * several `@` or a `?` before the host (parsers disagree where the host begins), `#`, `\`, spaces or control
 * characters, a connection service, a Unix socket path, a database name that is itself a connection string.
 */
export function databaseTargets(endpoint: string): DatabaseTargets {
  const hosts: string[] = [];
  const refusals: string[] = [];
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(endpoint);
  if (!scheme) return { hosts, refusals: ["it is not a URL (scheme://host/database), so its hosts cannot be checked"] };
  // eslint-disable-next-line no-control-regex
  if (/[\s\x00-\x1f\x7f\\#]/.test(endpoint)) {
    return {
      hosts,
      refusals: [
        "it holds a space, a control character, `\\` or `#`, which database clients read differently: " +
          "percent-encode them",
      ],
    };
  }
  const rest = endpoint.slice(scheme[0].length);
  // libpq: the user part ends at the first "@" before any "/"; other parsers take the last "@": allow only one.
  const slash = rest.indexOf("/");
  const beforePath = slash < 0 ? rest : rest.slice(0, slash);
  const ats = beforePath.split("@").length - 1;
  if (ats > 1)
    refusals.push("it has more than one `@` before the host: percent-encode `@` in the user name and password");
  const userEnd = ats > 0 ? beforePath.indexOf("@") : -1;
  if (userEnd >= 0 && beforePath.slice(0, userEnd).includes("?"))
    refusals.push("its user part holds `?`, which clients read as the start of the parameters: percent-encode it");
  const afterUser = rest.slice(userEnd + 1);
  const netlocEnd = afterUser.search(/[/?]/);
  const netloc = netlocEnd < 0 ? afterUser : afterUser.slice(0, netlocEnd);
  const tail = netlocEnd < 0 ? "" : afterUser.slice(netlocEnd);
  const q = tail.indexOf("?");
  const path = q < 0 ? tail : tail.slice(0, q);
  const query = q < 0 ? "" : tail.slice(q + 1);

  const addHostList = (raw: string, where: string): void => {
    const text = decode(raw);
    if (text === undefined) return void refusals.push(`${where} has a broken percent-escape`);
    for (const host of text.split(",")) {
      if (host === "") refusals.push(`${where} has an empty host (a client would use its default, a local socket)`);
      else if (host.startsWith("/") || host.startsWith("@"))
        refusals.push(`${where} names the Unix socket "${host}", not a host the fleet policy can allow`);
      else if (!/^[a-z0-9._:-]+$/i.test(host))
        refusals.push(`${where} names ${JSON.stringify(host)}, which is not a host name or IP address`);
      else hosts.push(host);
    }
  };

  let paramHosts = 0;
  const params: Array<[string, string]> = [];
  for (const pair of query === "" ? [] : query.split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const key = decode(eq < 0 ? pair : pair.slice(0, eq));
    if (key === undefined) {
      refusals.push("a parameter name has a broken percent-escape");
      continue;
    }
    params.push([key.toLowerCase(), eq < 0 ? "" : pair.slice(eq + 1)]);
  }
  for (const [key, raw] of params) {
    if (HOST_PARAMS.has(key)) {
      paramHosts++;
      addHostList(raw, `the parameter ${key}`);
    } else if (SERVICE_PARAMS.has(key)) {
      refusals.push(
        `the parameter ${key} takes the hosts from a connection service file outside the repository: write the ` +
          `hosts in the URL`,
      );
    } else if (key === "dbname" && isConnectionString(decode(raw) ?? "=")) {
      refusals.push("the parameter dbname is itself a connection string: name the database only");
    }
  }
  const dbname = decode(path.slice(1));
  if (dbname === undefined || (dbname !== "" && isConnectionString(dbname)))
    refusals.push("the database name is itself a connection string or badly escaped: name the database only");

  if (netloc === "") {
    if (paramHosts === 0) refusals.push("it names no host (a client would use its default, a local socket)");
  } else {
    netloc.split(",").forEach((spec, i) => {
      const where = `host ${i + 1} of the URL`;
      let host: string;
      let port: string;
      if (spec.startsWith("[")) {
        const close = spec.indexOf("]");
        if (close < 0) return void refusals.push(`${where} opens an IPv6 address with [ and never closes it`);
        host = spec.slice(1, close);
        const after = spec.slice(close + 1);
        if (after !== "" && !after.startsWith(":"))
          return void refusals.push(`${where} has text after its IPv6 address`);
        port = after.slice(1);
      } else {
        const colon = spec.indexOf(":");
        host = colon < 0 ? spec : spec.slice(0, colon);
        port = colon < 0 ? "" : spec.slice(colon + 1);
      }
      if (!/^\d*$/.test(port)) return void refusals.push(`${where} has a port that is not a number`);
      addHostList(host, where);
    });
  }
  return { hosts: [...new Set(hosts.map((h) => h.toLowerCase()))], refusals };
}
