import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { SDK_MESSAGE_SAMPLES } from "./support/sdk-messages.js";

// The Agent SDK installed beside this package (a dev dependency): its declarations are the
// format's public schema. A new member of `SDKMessage` in a newer SDK fails these tests until
// the adapter maps or ignores it, a sample is written for it and the README lists it.
const sdkDir = dirname(createRequire(import.meta.url).resolve("@anthropic-ai/claude-agent-sdk"));
const sdkVersion: string = JSON.parse(readFileSync(join(sdkDir, "package.json"), "utf8")).version;
const source = ts.createSourceFile(
  "sdk.d.ts",
  readFileSync(join(sdkDir, "sdk.d.ts"), "utf8"),
  ts.ScriptTarget.Latest,
);
const aliases = new Map<string, ts.TypeNode>();
for (const statement of source.statements) {
  if (ts.isTypeAliasDeclaration(statement)) aliases.set(statement.name.text, statement.type);
}

/** The string literals a type gives a property (`type: 'system'`), through unions and intersections of aliases. */
function literals(node: ts.TypeNode, property: string, into = new Set<string>()): Set<string> {
  if (ts.isTypeReferenceNode(node)) {
    const alias = aliases.get(node.typeName.getText(source));
    if (alias) literals(alias, property, into);
  } else if (ts.isUnionTypeNode(node) || ts.isIntersectionTypeNode(node)) {
    for (const part of node.types) literals(part, property, into);
  } else if (ts.isParenthesizedTypeNode(node)) {
    literals(node.type, property, into);
  } else if (ts.isTypeLiteralNode(node)) {
    for (const member of node.members) {
      if (!ts.isPropertySignature(member) || member.name.getText(source) !== property || !member.type)
        continue;
      const types = ts.isUnionTypeNode(member.type) ? member.type.types : [member.type];
      for (const type of types) {
        if (ts.isLiteralTypeNode(type) && ts.isStringLiteral(type.literal)) into.add(type.literal.text);
      }
    }
  }
  return into;
}

/** Each member of `SDKMessage` by name, with its `type` and `subtype` literals. */
function sdkMessageMembers(): Map<string, { types: Set<string>; subtypes: Set<string> }> {
  const union = aliases.get("SDKMessage");
  if (!union || !ts.isUnionTypeNode(union)) throw new Error(`no SDKMessage union in sdk.d.ts ${sdkVersion}`);
  const members = new Map<string, { types: Set<string>; subtypes: Set<string> }>();
  for (const member of union.types) {
    members.set(member.getText(source), {
      types: literals(member, "type"),
      subtypes: literals(member, "subtype"),
    });
  }
  return members;
}

const members = sdkMessageMembers();
const baseName = (sample: string) => sample.split(/[ ,]/)[0]!;

/** The README's table of the union: from its heading to the next section. */
function readmeUnionTable(): string {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const start = readme.indexOf("The Agent SDK's `SDKMessage` union");
  const end = readme.indexOf("\n## ", start);
  if (start === -1 || end === -1) throw new Error("the README has no SDKMessage table");
  return readme.slice(start, end);
}

describe(`the installed Agent SDK's SDKMessage union (${sdkVersion})`, () => {
  it("is read from its declarations", () => {
    expect(members.size).toBeGreaterThanOrEqual(40);
    expect(members.get("SDKResultMessage")).toEqual({
      types: new Set(["result"]),
      subtypes: expect.any(Set),
    });
    expect(members.get("SDKResultMessage")!.subtypes).toContain("success");
    expect(members.get("SDKAPIRetryMessage")).toEqual({
      types: new Set(["system"]),
      subtypes: new Set(["api_retry"]),
    });
  });

  it("has a hand-written sample of every member, and no sample of a member it does not have", () => {
    const sampled = new Set(SDK_MESSAGE_SAMPLES.map(([name]) => baseName(name)));
    expect([...members.keys()].filter((name) => !sampled.has(name))).toEqual([]);
    expect([...sampled].filter((name) => !members.has(name))).toEqual([]);
  });

  it("has samples whose type and subtype are the member's", () => {
    for (const [name, message] of SDK_MESSAGE_SAMPLES) {
      const member = members.get(baseName(name))!;
      if (member.types.size > 0) expect(member.types, name).toContain(message.type);
      if (member.subtypes.size > 0) expect(member.subtypes, name).toContain(message.subtype);
    }
  });

  it("has every member in the README's table: a system message in a `system` row by its subtype, any other by its type", () => {
    // The first cell of each row: `system` rows list subtypes, the others top-level types.
    const cells = readmeUnionTable()
      .split("\n")
      .filter((row) => row.startsWith("| `"))
      .map((row) => row.split("|")[1]!.trim());
    const systemRows = cells.filter((cell) => cell.startsWith("`system`"));
    const typeRows = cells.filter((cell) => !cell.includes("`system`"));
    for (const [name, { types, subtypes }] of members) {
      const system = types.has("system");
      const words = system ? subtypes : types;
      expect(words.size, name).toBeGreaterThan(0);
      for (const word of words) {
        expect(
          (system ? systemRows : typeRows).some((cell) => cell.includes(`\`${word}\``)),
          `${name}: \`${word}\``,
        ).toBe(true);
      }
    }
    // Every row is one of the two kinds.
    expect(systemRows.length + typeRows.length).toBe(cells.length);
  });
});
