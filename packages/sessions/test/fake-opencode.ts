import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * The stand-in's database file for `home`: in OpenCode's data directory
 * (`$HOME/.local/share/opencode`), where the real CLI keeps its `opencode.db`.
 */
export const fakeOpencodeDatabase = (home: string) => join(home, ".local", "share", "opencode", "db.json");

/**
 * Writes `<dir>/opencode`, a stand-in for the OpenCode CLI with the contract of OpenCode 1.18's
 * own commands, rows and all (its `import` read in OpenCode's source, its answers checked against
 * the real CLI by `test/agent-opencode.int.test.ts`):
 * - `export <id>`: the session's info, its messages (by session) and each message's parts (by
 *   message), every part with the `sessionID`/`messageID` of its row; "Session not found", exit 1;
 * - `import <file>`: the session row inserted or its directory updated, then every message row
 *   (filed under the imported session) and part row (under the message its `messageID` names)
 *   inserted unless one with its id exists; a file it cannot read prints "File not found" and
 *   exits 0, as the real CLI does;
 * - `session delete <id>`: the session, its messages and their parts;
 * - `db <query> --format json`: answers the SELECTs Stowage sends (`… FROM session WHERE id = '…'`,
 *   `… FROM message|part WHERE id IN (…)`) as JSON rows `{ kind, id, owner }`.
 * The database is `db.json` in OpenCode's data directory ({@link fakeOpencodeDatabase}), where
 * the real CLI keeps `opencode.db`; every call is appended to `$HOME/calls.log`. When
 * `$HOME/fail-next-import` exists, the next import removes it and fails (exit 1).
 */
export async function writeFakeOpencode(dir: string): Promise<string> {
  const bin = join(dir, "opencode");
  await mkdir(dir, { recursive: true });
  await writeFile(
    bin,
    `#!${process.execPath}
const fs = require("node:fs");
const path = require("node:path");
const home = process.env.HOME;
const dataDir = path.join(process.env.XDG_DATA_HOME || path.join(home, ".local", "share"), "opencode");
const dbFile = path.join(dataDir, "db.json");
const args = process.argv.slice(2);
fs.appendFileSync(path.join(home, "calls.log"), JSON.stringify(args) + "\\n");
const db = fs.existsSync(dbFile) ? JSON.parse(fs.readFileSync(dbFile, "utf8")) : { sessions: {}, messages: {}, parts: {} };
const save = () => { fs.mkdirSync(dataDir, { recursive: true }); fs.writeFileSync(dbFile, JSON.stringify(db)); };
const notFound = (id) => { process.stderr.write("\\u001b[91mError: \\u001b[0mSession not found: " + id + "\\n"); process.exit(1); };
const [command, arg] = args;
if (command === "export") {
  process.stderr.write("Exporting session: " + arg + "\\n");
  if (!db.sessions[arg]) notFound(arg);
  const messages = Object.entries(db.messages).filter(([, m]) => m.session_id === arg).map(([id, m]) => ({
    info: { ...m.info, id, sessionID: arg },
    parts: Object.entries(db.parts).filter(([, p]) => p.message_id === id)
      .map(([pid, p]) => ({ ...p.data, id: pid, sessionID: p.session_id, messageID: p.message_id })),
  }));
  // As OpenCode 1.18 does: stdout not blocking, and the process gone before a pipe drains, so a
  // reader on a pipe gets the first 64 KiB only. A file takes it all.
  process.stdout._handle?.setBlocking?.(false);
  process.stdout.write(JSON.stringify({ info: db.sessions[arg], messages }, null, 2));
  process.exit(0);
} else if (command === "import") {
  if (fs.existsSync(path.join(home, "fail-next-import"))) {
    fs.rmSync(path.join(home, "fail-next-import"));
    process.stderr.write("boom\\n");
    process.exit(1);
  }
  let data;
  try { data = JSON.parse(fs.readFileSync(arg, "utf8")); } catch { process.stdout.write("File not found: " + arg + "\\n"); process.exit(0); }
  const sid = data.info.id;
  db.sessions[sid] = db.sessions[sid] ? { ...db.sessions[sid], directory: process.cwd() } : { ...data.info, directory: process.cwd() };
  for (const m of data.messages) {
    const { id, sessionID, ...info } = m.info;
    if (!db.messages[id]) db.messages[id] = { session_id: sid, info };
    for (const p of m.parts) {
      const { id: pid, sessionID: _s, messageID, ...rest } = p;
      if (!db.parts[pid]) db.parts[pid] = { message_id: messageID, session_id: sid, data: rest };
    }
  }
  save();
  process.stdout.write("Imported session: " + sid + "\\n");
} else if (command === "session" && arg === "delete") {
  const id = args[2];
  if (!db.sessions[id]) notFound(id);
  delete db.sessions[id];
  for (const [mid, m] of Object.entries(db.messages)) {
    if (m.session_id !== id) continue;
    delete db.messages[mid];
    for (const [pid, p] of Object.entries(db.parts)) if (p.message_id === mid) delete db.parts[pid];
  }
  save();
  process.stdout.write("Session " + id + " deleted\\n");
} else if (command === "db") {
  const rows = [];
  for (const select of arg.split(" UNION ALL ")) {
    const match = /FROM (session|message|part) WHERE id (?:= '([^']*)'|IN \\(([^)]*)\\))/.exec(select);
    if (!match) { process.stderr.write("unexpected query: " + select + "\\n"); process.exit(1); }
    const [, table, one, list] = match;
    const ids = one !== undefined ? [one] : list.split(",").map((quoted) => quoted.slice(1, -1));
    for (const id of ids) {
      if (table === "session" && db.sessions[id]) rows.push({ kind: "session", id, owner: id });
      if (table === "message" && db.messages[id]) rows.push({ kind: "message", id, owner: db.messages[id].session_id });
      if (table === "part" && db.parts[id]) rows.push({ kind: "part", id, owner: db.parts[id].session_id });
    }
  }
  process.stdout.write(JSON.stringify(rows, null, 2) + "\\n");
} else {
  process.exit(2);
}
`,
  );
  await chmod(bin, 0o755);
  return bin;
}
