// Which cluster a verified client certificate comes from: the front-proxy CA that signed it, among the CAs each
// cluster's API server publishes. A CA that more than one cluster publishes answers for none of them.
import { X509Certificate } from "node:crypto";
import type { TLSSocket } from "node:tls";
import { pemCertificates } from "./serving-cert.js";

interface KnownCa {
  cert: X509Certificate;
  pem: string;
  owner: string;
  /** Its public key (SPKI, base64): two CAs of one key sign the same certificates. */
  key: string;
}

/** The cluster (its key) that issued a certificate, or why none did. */
export type Issuer = { owner: string } | { refusal: string };

/** Links of a chain a peer may send (its certificate, then intermediates); more is refused. */
const MAX_DEPTH = 5;

export class IssuerIndex {
  private readonly bySubject = new Map<string, KnownCa[]>();
  private readonly byOwner = new Map<string, KnownCa[]>();
  /** Counts changes, so that answers kept per connection are asked again after one. */
  generation = 0;
  private contestedCache = new Map<string, string[]>();
  private contestedAt = -1;

  /**
   * Sets the CAs `owner` trusts for its front proxy (a PEM bundle, as its API server publishes it); true when they
   * changed. Throws (changing nothing) when a certificate of the bundle does not parse.
   */
  set(owner: string, bundle: string): boolean {
    const pems = pemCertificates(bundle);
    const parsed = pems.map((pem) => {
      const cert = new X509Certificate(pem);
      return { cert, pem, owner, key: cert.publicKey.export({ type: "spki", format: "der" }).toString("base64") };
    });
    const before = this.byOwner.get(owner) ?? [];
    if (
      before.length === parsed.length &&
      before.every((b, i) => b.cert.fingerprint256 === parsed[i]!.cert.fingerprint256)
    )
      return false;
    this.remove(owner);
    this.byOwner.set(owner, parsed);
    for (const ca of parsed) {
      const list = this.bySubject.get(ca.cert.subject) ?? [];
      list.push(ca);
      this.bySubject.set(ca.cert.subject, list);
    }
    this.generation++;
    return true;
  }

  /** Forgets `owner`'s CAs; true when it had some. */
  remove(owner: string): boolean {
    const before = this.byOwner.get(owner);
    if (!before) return false;
    this.byOwner.delete(owner);
    for (const ca of before) {
      const list = (this.bySubject.get(ca.cert.subject) ?? []).filter((c) => c !== ca);
      if (list.length > 0) this.bySubject.set(ca.cert.subject, list);
      else this.bySubject.delete(ca.cert.subject);
    }
    this.generation++;
    return true;
  }

  /** Every CA certificate known (PEM), each once: what the server's TLS context verifies client certificates with. */
  pems(): string[] {
    const seen = new Map<string, string>();
    for (const list of this.byOwner.values()) for (const ca of list) seen.set(ca.cert.fingerprint256, ca.pem);
    return [...seen.values()];
  }

  /** Owners whose CAs another owner publishes too (their certificates are refused), each with the others. */
  contested(): Map<string, string[]> {
    if (this.contestedAt === this.generation) return this.contestedCache;
    const byKey = new Map<string, Set<string>>();
    for (const list of this.byOwner.values())
      for (const ca of list) byKey.set(ca.key, (byKey.get(ca.key) ?? new Set()).add(ca.owner));
    const out = new Map<string, string[]>();
    for (const owners of byKey.values()) {
      if (owners.size < 2) continue;
      for (const owner of owners) {
        const others = [...owners].filter((o) => o !== owner);
        out.set(owner, [...new Set([...(out.get(owner) ?? []), ...others])].sort());
      }
    }
    this.contestedCache = out;
    this.contestedAt = this.generation;
    return out;
  }

  /**
   * The owner of the CA that signed `chain[0]` (a certificate the TLS layer already verified against some CA of this
   * index): each link's signature is checked with the candidate's key, never matched by name alone. When no known CA
   * signed it, the chain's next certificate that did is followed (an intermediate the peer sent).
   */
  resolve(chain: readonly X509Certificate[]): Issuer {
    let cur = chain[0];
    if (!cur) return { refusal: "no client certificate" };
    for (let depth = 0; depth < MAX_DEPTH; depth++) {
      const signers = (this.bySubject.get(cur.issuer) ?? []).filter((ca) => signedBy(cur!, ca.cert));
      const owners = [...new Set(signers.map((ca) => ca.owner))];
      if (owners.length === 1) return { owner: owners[0]! };
      if (owners.length > 1)
        return { refusal: `the CA that signed the client certificate is published by ${owners.length} clusters` };
      const next: X509Certificate | undefined = chain.find(
        (c) => c !== cur && c.subject === cur!.issuer && signedBy(cur!, c),
      );
      if (!next) break;
      cur = next;
    }
    return { refusal: "the client certificate was not signed by any cluster's front-proxy CA" };
  }
}

function signedBy(cert: X509Certificate, ca: X509Certificate): boolean {
  try {
    return cert.checkIssued(ca) && cert.verify(ca.publicKey);
  } catch {
    return false;
  }
}

/** Most answers kept by the certificate they are about (each front proxy presents one). */
const MAX_KEPT = 20_000;

/**
 * The issuer of a TLS peer's certificate, kept by that certificate's fingerprint until the CAs change: every cluster's
 * front proxy presents one certificate on all its connections, so it is resolved once, not once per connection.
 */
export class PeerIssuers {
  private readonly kept = new Map<string, { generation: number; issuer: Issuer }>();
  constructor(private readonly index: IssuerIndex) {}

  of(socket: TLSSocket): Issuer {
    const leaf = socket.getPeerX509Certificate();
    if (!leaf) return { refusal: "no client certificate" };
    const key = leaf.fingerprint256;
    const hit = this.kept.get(key);
    if (hit && hit.generation === this.index.generation) return hit.issuer;
    // The peer's own certificate alone, then (an intermediate it sent) the chain it sent.
    let issuer = this.index.resolve([leaf]);
    if ("refusal" in issuer) {
      const chain = peerChain(socket);
      if (chain.length > 1) issuer = this.index.resolve(chain);
    }
    this.kept.delete(key);
    this.kept.set(key, { generation: this.index.generation, issuer });
    if (this.kept.size > MAX_KEPT) this.kept.delete(this.kept.keys().next().value!);
    return issuer;
  }
}

/** The certificates a TLS peer presented: its own, then the chain it sent (as parsed certificates). */
function peerChain(socket: TLSSocket): X509Certificate[] {
  const out: X509Certificate[] = [];
  let cur = socket.getPeerCertificate(true);
  const seen = new Set<unknown>();
  while (cur?.raw && !seen.has(cur) && out.length < MAX_DEPTH) {
    seen.add(cur);
    try {
      out.push(new X509Certificate(cur.raw));
    } catch {
      break;
    }
    const next = cur.issuerCertificate;
    if (!next || next === cur) break;
    cur = next;
  }
  return out;
}
