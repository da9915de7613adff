import ts from "typescript";
import type { PublishedPackage } from "./entries.js";

/** One name an entry point exports. */
export interface ExportedName {
  name: string;
  /** A value at run time (function, class, constant), not only a type. */
  runtime: boolean;
  /** What a caller sees of it: its signature, or its declaration as written. */
  declaration: string;
}

/** The exported names of one entry point, sorted by name. */
export interface EntryExports {
  packageName: string;
  subpath: string;
  names: ExportedName[];
}

const TYPE_FLAGS =
  ts.TypeFormatFlags.NoTruncation |
  ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope |
  ts.TypeFormatFlags.WriteArrayAsGenericType;

/** Longest declaration line kept in a report: an inferred type past it is cut (and says so). */
const MAX_DECLARATION_CHARS = 1_000;

function cut(text: string): string {
  const oneLine = text.replace(/\s+/g, " ");
  return oneLine.length <= MAX_DECLARATION_CHARS ? oneLine : `${oneLine.slice(0, MAX_DECLARATION_CHARS)}…`;
}

function isTypeOnlyExport(symbol: ts.Symbol): boolean {
  return (symbol.declarations ?? []).some(
    (declaration) =>
      ts.isExportSpecifier(declaration) && (declaration.isTypeOnly || declaration.parent.parent.isTypeOnly),
  );
}

const printer = ts.createPrinter({ removeComments: true });

/** A declaration as written (interfaces, type aliases, enums): its own text, comments removed. */
function written(declaration: ts.Declaration): string {
  const text = printer.printNode(ts.EmitHint.Unspecified, declaration, declaration.getSourceFile());
  return text.replace(/^export (declare )?/, "");
}

/** A class: its own public members with their types, not its body. */
function classOutline(checker: ts.TypeChecker, name: string, symbol: ts.Symbol, at: ts.Node): string {
  const declaration = symbol.declarations?.find(ts.isClassDeclaration);
  const own = checker
    .getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol))
    .filter((member) => member.declarations?.some((d) => d.parent === declaration && !isPrivate(d)));
  const heritage = declaration?.heritageClauses?.map((clause) => ` ${clause.getText()}`).join("") ?? "";
  const members = own.map(
    (member) =>
      `  ${member.name}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(member, at), at, TYPE_FLAGS)};`,
  );
  return [`class ${name}${heritage} {`, ...members, "}"].join("\n");
}

function isPrivate(declaration: ts.Declaration): boolean {
  const flags = ts.getCombinedModifierFlags(declaration);
  return (
    Boolean(flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) ||
    declaration.getText().startsWith("#")
  );
}

function describe(checker: ts.TypeChecker, name: string, symbol: ts.Symbol, at: ts.Node): string {
  const { flags } = symbol;
  if (flags & ts.SymbolFlags.Function) {
    const type = checker.getTypeOfSymbolAtLocation(symbol, at);
    return type
      .getCallSignatures()
      .map((signature) => cut(`function ${name}${checker.signatureToString(signature, at, TYPE_FLAGS)}`))
      .join("\n");
  }
  if (flags & ts.SymbolFlags.Class) return classOutline(checker, name, symbol, at);
  if (flags & ts.SymbolFlags.Variable) {
    const type = checker.getTypeOfSymbolAtLocation(symbol, at);
    return cut(`const ${name}: ${checker.typeToString(type, at, TYPE_FLAGS)}`);
  }
  const declarations = (symbol.declarations ?? []).filter(
    (d) => ts.isInterfaceDeclaration(d) || ts.isTypeAliasDeclaration(d) || ts.isEnumDeclaration(d),
  );
  if (declarations.length > 0) return declarations.map(written).join("\n");
  return name;
}

/**
 * Every entry point's exports, read by the TypeScript checker from the sources (the
 * `@stowage/source` condition), so no build is needed.
 */
export function readExports(packages: readonly PublishedPackage[]): EntryExports[] {
  const roots = packages.flatMap((pkg) => pkg.entries.map((entry) => entry.source));
  const program = ts.createProgram(roots, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    customConditions: ["@stowage/source"],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ["node"],
  });
  const checker = program.getTypeChecker();
  const read: EntryExports[] = [];
  for (const pkg of packages) {
    for (const entry of pkg.entries) {
      const file = program.getSourceFile(entry.source);
      const moduleSymbol = file && checker.getSymbolAtLocation(file);
      if (!file || !moduleSymbol)
        throw new Error(`${pkg.name} ${entry.subpath}: cannot read ${entry.source}`);
      const names = checker.getExportsOfModule(moduleSymbol).map((exported): ExportedName => {
        const resolved =
          exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
        const runtime = Boolean(resolved.flags & ts.SymbolFlags.Value) && !isTypeOnlyExport(exported);
        return {
          name: exported.name,
          runtime,
          declaration: describe(checker, exported.name, resolved, file),
        };
      });
      names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      read.push({ packageName: pkg.name, subpath: entry.subpath, names });
    }
  }
  return read;
}
