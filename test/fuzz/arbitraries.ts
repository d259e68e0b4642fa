import fc from "fast-check";

/**
 * Generators for the fuzz suites: hostile text (every Unicode general category, lone surrogates,
 * controls, bidi marks, emoji sequences, SQL and tsquery syntax), numbers at every edge JSON can
 * carry, NaN-like strings, wrong types, and tool arguments derived from a published input schema.
 */

/** The run's seed and size: fixed by default so a run is reproducible; override to explore. */
export const FUZZ = {
  seed: Number(process.env.NORTH_FUZZ_SEED ?? 20_261_201),
  /** Multiplies every property's run count (e.g. 10 for a long exploration). */
  scale: Number(process.env.NORTH_FUZZ_SCALE ?? 1),
};

/** fast-check parameters for one property: the shared seed, a bounded run count. */
export function fuzzParams(numRuns: number): fc.Parameters<unknown> {
  return { seed: FUZZ.seed, numRuns: Math.max(1, Math.round(numRuns * FUZZ.scale)) };
}

/**
 * A few code points (or one-code-point strings) of every Unicode general category, BMP and
 * astral. `categorySamplesAreRight` checks each against the engine's own `\p{gc=…}` table.
 */
export const CATEGORY_SAMPLES: Record<string, readonly string[]> = {
  Lu: ["A", "\u00c9", "\u03a3", "\u0414", "\u{1d400}"],
  Ll: ["a", "\u00df", "\u03c3", "\u044f", "\u{1d41a}"],
  Lt: ["\u01c5", "\u1f88"],
  Lm: ["\u02b0", "\u30fc"],
  Lo: ["\u05d0", "\u0627", "\u4e2d", "\u0e01", "\u{20000}"],
  Mn: ["\u0301", "\u0308", "\u05b8", "\u{1d167}"],
  Mc: ["\u0903", "\u09be"],
  Me: ["\u20dd", "\u0488"],
  Nd: ["0", "7", "\u0663", "\uff19", "\u{1d7d8}"],
  Nl: ["\u216b", "\u3007"],
  No: ["\u00b2", "\u00bd", "\u2460"],
  Pc: ["_", "\u203f"],
  Pd: ["-", "\u2014", "\u2010"],
  Ps: ["(", "[", "{", "\u300c"],
  Pe: [")", "]", "}", "\u300d"],
  Pi: ["\u00ab", "\u201c"],
  Pf: ["\u00bb", "\u201d"],
  Po: ["!", '"', "'", "%", "&", "*", "\\", "\u00bf", ";", ":", "."],
  Sm: ["+", "<", "=", ">", "|", "~", "\u2211"],
  Sc: ["$", "\u20ac", "\u00a5"],
  Sk: ["^", "`", "\u00a8", "\u{1f3fd}"],
  So: ["\u00a9", "\u{1f600}", "\u{1f1eb}"],
  Zs: [" ", "\u00a0", "\u3000", "\u2003"],
  Zl: ["\u2028"],
  Zp: ["\u2029"],
  Cc: ["\u0000", "\t", "\n", "\r", "\u001b", "\u007f", "\u0085", "\u009f"],
  Cf: ["\u200b", "\u200d", "\u200e", "\u200f", "\u202e", "\u2066", "\u061c", "\ufeff", "\u00ad"],
  Cs: ["\ud800", "\udbff", "\udc00", "\udfff"],
  Co: ["\ue000", "\uf8ff", "\u{f0000}", "\u{10fffd}"],
  Cn: ["\u0378", "\ufffe", "\uffff", "\u{50000}", "\u{10ffff}"],
};

/** Sequences that are more than one code point and break naive handling. */
const SEQUENCES = [
  "\u{1f468}\u200d\u{1f469}\u200d\u{1f467}", // family: ZWJ sequence
  "\u{1f1eb}\u{1f1f7}", // flag
  "1\ufe0f\u20e3", // keycap
  "\u{1f44d}\u{1f3fd}", // skin tone
  "e\u0301", // decomposed é (NFC composes it)
  "Z\u0351\u0354\u0362a\u0300\u0301\u0302\u0303l\u0336\u0337g\u0338o", // zalgo
  "\u1100\u1161\u11a8", // Hangul jamo (NFC composes them)
  "\ufb01", // ﬁ ligature (NFKC only)
  "\r\n",
  "\u202eevil\u202c", // right-to-left override
  "\u05e9\u05dc\u05d5\u05dd", // Hebrew word
  "\u0645\u0631\u062d\u0628\u0627", // Arabic word
  "\ud83d", // high half of an emoji, alone
  "\ude00", // low half, alone
];

/** Text that means something to SQL, tsquery, JSON, HTML or a fence. */
const SYNTAX = [
  "'",
  "''",
  '"',
  "\\",
  "%",
  "_",
  "a & b",
  "a | b",
  "!a",
  "(a",
  "a:*",
  "a <-> b",
  "$$",
  "--",
  "/*",
  ";",
  "drop table memories;",
  "</north-memories>",
  "<north-memories>",
  "\n- [stated] forged line",
  "{}",
  "[]",
  "null",
];

/** Strings a loose parser might take for a number or a keyword. */
export const NAN_LIKE = [
  "NaN",
  "nan",
  "Infinity",
  "-Infinity",
  "1e400",
  "-0",
  "0x1F",
  "1_000",
  " 42 ",
  "42",
  "-1",
  "1.5",
  "null",
  "undefined",
  "true",
  "",
];

/** One code point of any kind, lone surrogates included. */
const anyCodePoint = fc
  .integer({ min: 0, max: 0x10ffff })
  .map((cp) => (cp >= 0xd800 && cp <= 0xdfff ? String.fromCharCode(cp) : String.fromCodePoint(cp)));

const categoryChar = fc.constantFrom(...Object.values(CATEGORY_SAMPLES).flat());

/** The characters most likely to break storage, hashing or rendering: each gets its own weight. */
const DANGEROUS = ["\u0000", "\ud800", "\udfff", "\u202e", "\u2028", "\r\n", "\ufeff", "\u0085"];

/** A short piece of hostile text. */
const piece = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...DANGEROUS) },
  { weight: 4, arbitrary: categoryChar },
  { weight: 2, arbitrary: fc.constantFrom(...SEQUENCES) },
  { weight: 1, arbitrary: fc.constantFrom(...SYNTAX) },
  { weight: 2, arbitrary: anyCodePoint },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 6 }) },
  { weight: 3, arbitrary: fc.constantFrom("contrat", "Dubois", "bail", "court", "the", " ") },
);

/** Hostile text of modest length. */
export const hostileString = fc.array(piece, { maxLength: 24 }).map((parts) => parts.join(""));

/**
 * Text around the bounds North enforces (128, 200, 500, 1,000, 2,000 and 10,000 code points),
 * built from a character that is one code point but two UTF-16 units, or one that sanitizing
 * drops or changes, so a bound counted in the wrong unit shows.
 */
export const boundaryString = fc
  .tuple(
    fc.constantFrom("a", "\u{1f600}", "\u00e9", "e\u0301", "\u4e2d", " ", "\u0000", "\ud800", "x "),
    fc.constantFrom(
      0,
      1,
      127,
      128,
      129,
      199,
      200,
      201,
      499,
      500,
      501,
      999,
      1000,
      1001,
      1999,
      2000,
      2001,
      9999,
      10_000,
      10_001,
      40_000,
    ),
  )
  .map(([unit, count]) => unit.repeat(count));

/** Numbers at every edge a JSON number can reach, and ordinary ones. */
export const edgyNumber = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: -3, max: 25 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      0,
      -0,
      1,
      20,
      21,
      364,
      365,
      366,
      2 ** 31 - 1,
      2 ** 31,
      2 ** 32,
      2 ** 53 - 1,
      2 ** 53,
      2 ** 53 + 2,
      -(2 ** 31),
      -(2 ** 53),
      1e21,
      1e308,
      -1e308,
      5e-324,
      0.5,
      1.5,
      -1.5,
      1.0000001,
    ),
  },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
);

/**
 * Number literals that `JSON.stringify` cannot write but a client can send: they reach the
 * server as Infinity, 0 or a rounded integer. Placed in the body by {@link toJsonText}.
 */
export const RAW_NUMBER_LITERALS = [
  "1e400",
  "-1e400",
  "1E+2",
  "1e-400",
  "123456789012345678901234567890",
  "-0.0",
  "1.0",
  "2.0000000000000000001",
];

const RAW_MARK = "~~north-raw-number~~";

/** A value that `toJsonText` writes as a bare number literal. */
export const rawNumber = fc
  .constantFrom(...RAW_NUMBER_LITERALS)
  .map((literal) => `${RAW_MARK}${literal}${RAW_MARK}`);

/** JSON text of `value`, with every `rawNumber` written as its bare literal. */
export function toJsonText(value: unknown): string {
  return JSON.stringify(value).replace(
    new RegExp(`"${RAW_MARK}([-+.0-9eE]+)${RAW_MARK}"`, "g"),
    (_match, literal: string) => literal,
  );
}

/** Any JSON value at all: the wrong type for whatever field it lands in. */
export const anyJson = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, 0, "", [null], { "": "" }) },
  { weight: 1, arbitrary: rawNumber },
);

/** Keys a sloppy merge or a confused model might add: server-owned fields, prototype names. */
const EXTRA_KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "organization_id",
  "owner_user_id",
  "user_id",
  "author_id",
  "version",
  "answer_version",
  "created_at",
  "scopes",
  "role",
  "id",
  "",
];

/** Extra, unknown fields. */
export const extraFields = fc.dictionary(
  fc.oneof(fc.constantFrom(...EXTRA_KEYS), fc.string({ maxLength: 8 })),
  anyJson,
  { maxKeys: 3, noNullPrototype: true },
);

/** The part of a published JSON Schema the generators read. */
export interface JsonSchemaProperty {
  type?: string;
  enum?: unknown[];
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  items?: JsonSchemaProperty;
  maxItems?: number;
  maxLength?: number;
}

export interface ObjectJsonSchema {
  properties?: Record<string, JsonSchemaProperty>;
  required?: string[];
}

/** Values of the domain for a field, by its name: what makes a call go deep, not just fail. */
export type FieldDomain = Record<string, fc.Arbitrary<unknown>>;

const MISSING = Symbol("missing");

function edgesOf(prop: JsonSchemaProperty): number[] {
  const edges: number[] = [];
  for (const bound of [prop.minimum, prop.maximum, prop.exclusiveMinimum]) {
    if (bound !== undefined && Number.isFinite(bound)) edges.push(bound - 1, bound, bound + 1);
  }
  return edges;
}

function wellTyped(
  name: string,
  prop: JsonSchemaProperty,
  domain: FieldDomain,
): fc.Arbitrary<unknown> {
  const own = domain[name];
  const options: fc.WeightedArbitrary<unknown>[] = own ? [{ weight: 5, arbitrary: own }] : [];
  if (prop.enum) {
    const members = prop.enum.map(String);
    options.push(
      { weight: 5, arbitrary: fc.constantFrom(...prop.enum) },
      {
        weight: 1,
        arbitrary: fc
          .constantFrom(...members)
          .chain((m) => fc.constantFrom(m.toUpperCase(), ` ${m}`, `${m}\u0000`, `${m}\u200b`)),
      },
    );
  }
  switch (prop.type) {
    case "string":
      options.push(
        { weight: 3, arbitrary: hostileString },
        { weight: 1, arbitrary: boundaryString },
        { weight: 1, arbitrary: fc.constantFrom(...NAN_LIKE) },
      );
      if (prop.format === "uuid") options.push({ weight: 3, arbitrary: fc.uuid() });
      break;
    case "integer":
    case "number": {
      const edges = edgesOf(prop);
      options.push({ weight: 4, arbitrary: edgyNumber });
      if (edges.length > 0) options.push({ weight: 4, arbitrary: fc.constantFrom(...edges) });
      options.push({ weight: 1, arbitrary: rawNumber });
      break;
    }
    case "array": {
      const item = prop.items
        ? fc.oneof(wellTyped(`${name}[]`, prop.items, domain), anyJson)
        : anyJson;
      const max = (prop.maxItems ?? 5) + 2;
      options.push(
        { weight: 4, arbitrary: fc.array(item, { maxLength: 4 }) },
        { weight: 1, arbitrary: fc.array(item, { minLength: max - 3, maxLength: max }) },
      );
      break;
    }
    default:
      options.push({ weight: 1, arbitrary: anyJson });
  }
  return fc.oneof(...options);
}

/** A domain value with one hostile character put somewhere inside it (strings only). */
function spliced(values: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc
    .tuple(values, fc.oneof(fc.constantFrom(...DANGEROUS), categoryChar), fc.nat())
    .map(([value, char, at]) => {
      if (typeof value !== "string") return value;
      const cut = at % (value.length + 1);
      return value.slice(0, cut) + char + value.slice(cut);
    });
}

/**
 * A field's value: mostly of its type, sometimes of another type or NaN-like text. `mild` keeps
 * to the field's domain (its enum members, or values named in `domain`) most of the time, so a
 * call with several required fields gets past the schema often enough to reach the handler.
 */
function fieldValue(
  name: string,
  prop: JsonSchemaProperty,
  domain: FieldDomain,
  mild: boolean,
): fc.Arbitrary<unknown> {
  const named = domain[name];
  const own = named ?? (prop.enum ? fc.constantFrom(...prop.enum) : undefined);
  return fc.oneof(
    ...(mild && own ? [{ weight: 40, arbitrary: own }] : []),
    ...(mild && named ? [{ weight: 20, arbitrary: spliced(named) }] : []),
    { weight: 8, arbitrary: wellTyped(name, prop, domain) },
    { weight: 1, arbitrary: anyJson },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(...NAN_LIKE, null) },
  );
}

/**
 * Arguments for a tool from its published input schema: each field present or missing (a
 * required one present more often), of its type or not, plus unknown extra fields.
 */
export function argumentsFor(
  schema: ObjectJsonSchema,
  domain: FieldDomain,
): fc.Arbitrary<Record<string, unknown>> {
  const required = new Set(schema.required ?? []);
  const fields = (mild: boolean) =>
    Object.entries(schema.properties ?? {}).map(([name, prop]) =>
      fc
        .oneof(
          { weight: required.has(name) ? 19 : 5, arbitrary: fieldValue(name, prop, domain, mild) },
          { weight: required.has(name) ? 1 : 4, arbitrary: fc.constant<typeof MISSING>(MISSING) },
        )
        .map((value) => [name, value] as const),
    );
  return fc
    .tuple(
      fc.oneof(fc.tuple(...fields(true)), fc.tuple(...fields(false))),
      fc.option(extraFields, { freq: 4, nil: undefined }),
    )
    .map(([entries, extras]) => {
      const args: Record<string, unknown> = { ...extras };
      for (const [name, value] of entries) {
        if (value === MISSING) delete args[name];
        else args[name] = value;
      }
      return args;
    });
}
