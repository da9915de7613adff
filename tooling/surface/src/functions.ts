import { readFileSync } from "node:fs";
import { relative } from "node:path";
import ts from "typescript";

/** One function of the source and how many lines it spans, nested functions included. */
export interface FunctionSpan {
  /** `path:line` from the workspace root. */
  where: string;
  name: string;
  lines: number;
}

function nameOf(node: ts.Node): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name)
    return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText();
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText();
  return "(anonymous)";
}

/** Every function-like node of `files` with its span in lines. */
export function functionSpans(root: string, files: readonly string[]): FunctionSpan[] {
  const spans: FunctionSpan[] = [];
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && "body" in node && node.body) {
        const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        spans.push({
          where: `${relative(root, file)}:${start + 1}`,
          name: nameOf(node),
          lines: end - start + 1,
        });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return spans.sort((a, b) => b.lines - a.lines);
}
