// Quantities as the real API server reads them: generated strings are written into a ResourceQuota's spec.hard
// (server-side dry run); vc's parser must accept exactly the strings the server accepts and read the amount the
// server stores (its canonical form, read here by a small independent reader; a resource list rounds up to 10^-3).
import { expect } from "chai";
import fc from "fast-check";
import { compareQuantity, parseQuantity, parseResourceListQuantity, type Quantity } from "../../src/kube/quantity.js";
import { useRealKube } from "../support/real-kube.js";

/**
 * Exact reader of what the server prints: [sign] digits [. digits] and one suffix; independent of src/kube/quantity.ts.
 */
function readPrinted(text: string): Quantity {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/.exec(text);
  if (!m) throw new Error(`the server printed an unexpected quantity ${JSON.stringify(text)}`);
  const frac = m[3] ?? "";
  let mantissa = BigInt(`${m[2] ?? ""}${frac}` || "0");
  let exponent = -frac.length;
  const suffix = m[4] ?? "";
  const decimal: Record<string, number> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
  const binary: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
  if (suffix in decimal) exponent += decimal[suffix]!;
  else if (suffix in binary) mantissa <<= BigInt(binary[suffix]!);
  else exponent += Number(suffix.slice(1));
  if (m[1] === "-") mantissa = -mantissa;
  return { mantissa, exponent, digits: (mantissa < 0n ? -mantissa : mantissa).toString().length };
}

const digits = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: min, maxLength: max });
const SUFFIXES = ["", "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/**
 * Quantity-shaped strings, well-formed and not: signs, leading zeros, fractions, every suffix, signed exponents, stray
 * characters.
 */
const quantityLike = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom("", "", "+", "-"), digits(0, 22), fc.option(digits(0, 12)), fc.constantFrom(...SUFFIXES))
      .map(([s, i, f, x]) => `${s}${i}${f === null ? "" : `.${f}`}${x}`),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.constantFrom("", "-", "+"),
        digits(0, 8),
        fc.option(digits(0, 6)),
        fc.constantFrom("e", "E"),
        fc.constantFrom("", "+", "-"),
        digits(0, 2),
      )
      .map(([s, i, f, e, es, ed]) => `${s}${i}${f === null ? "" : `.${f}`}${e}${es}${ed}`),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        digits(1, 4),
        fc.constantFrom(
          "ki",
          "KI",
          "K",
          "i",
          "mi",
          "Ei3",
          "e3e",
          "k3",
          "x",
          " ",
          ".",
          "..",
          "1",
          "Gi ",
          " Mi",
          "e+",
          "ee3",
          "-3",
          "\t",
          "\u00a0",
          "\n",
        ),
      )
      .map(([d, x]) => `${d}${x}`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "0",
      "",
      ".",
      "+",
      "-",
      "m",
      "Ki",
      "e3",
      "e-10",
      "-e-10",
      ".e-10",
      "1.e-10",
      " 1",
      "1 ",
      "\u00a01\u3000",
      "\t1",
      "0.0",
      "00",
      "1.G",
      "8Ei",
      "16Ei",
      "7.99Ei",
      "1.5n",
      "0.1n",
      "9223372036854775807",
      "9223372036854775808Ki",
    ),
  },
);

describe("e2e: quantities read as the real API server reads them", function () {
  this.timeout(240_000);
  const kube = useRealKube();
  const ns = "quantities";

  before(async () => {
    const r = await kube().request("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: ns },
    });
    expect(r.status).to.equal(201);
  });

  /**
   * The server's verdict: the amount it stores, "refused" when it cannot parse the string, "invalid" when it parses but
   * fails validation.
   */
  async function serverReads(text: string): Promise<Quantity | "refused" | "invalid"> {
    const body = {
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: { name: "q" },
      spec: { hard: { "requests.memory": text } },
    };
    const r = await kube().request<{ spec?: { hard?: Record<string, string> } }>(
      "POST",
      `/api/v1/namespaces/${ns}/resourcequotas?dryRun=All`,
      body,
    );
    if (r.status === 400) return "refused";
    if (r.status === 422) return "invalid";
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    return readPrinted(r.body.spec!.hard!["requests.memory"]!);
  }

  it("accepts and refuses the strings the server does, and reads the amount the server stores", async () => {
    const seen = { accepted: 0, refused: 0, negative: 0 };
    await fc.assert(
      fc.asyncProperty(quantityLike, async (text) => {
        const ours = parseQuantity(text);
        const server = await serverReads(text);
        if (server === "refused") {
          expect(ours, `the server refuses ${JSON.stringify(text)}`).to.equal(undefined);
          seen.refused++;
          return;
        }
        expect(ours, `the server accepts ${JSON.stringify(text)}`).to.not.equal(undefined);
        if (server === "invalid") {
          // The only validation a parsed quota amount fails is being negative.
          expect(ours!.mantissa < 0n, `the server finds ${JSON.stringify(text)} invalid`).to.equal(true);
          seen.negative++;
          return;
        }
        // A resource list stores its amounts rounded up to 10^-3 (the server's defaulting of ResourceList).
        expect(
          compareQuantity(parseResourceListQuantity(text)!, server),
          `${JSON.stringify(text)}: ours ${ours!.mantissa}e${ours!.exponent}, server ` +
            `${server.mantissa}e${server.exponent}`,
        ).to.equal(0);
        seen.accepted++;
      }),
      { numRuns: 400, seed: 2126 },
    );
    expect(seen.accepted).to.be.greaterThan(100);
    expect(seen.refused).to.be.greaterThan(20);
    expect(seen.negative).to.be.greaterThan(10);
  });

  it("1Ei is more than 64Gi on the server as in vc: the bound the fleet policy compares", async () => {
    const ei = await serverReads("1Ei");
    const gi = await serverReads("64Gi");
    if (ei === "refused" || ei === "invalid" || gi === "refused" || gi === "invalid")
      throw new Error("the server refused a plain quantity");
    expect(compareQuantity(ei, gi)).to.equal(1);
    expect(compareQuantity(parseQuantity("1Ei")!, parseQuantity("64Gi")!)).to.equal(1);
  });
});
