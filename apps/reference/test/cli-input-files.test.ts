// Input files of the CLI: what is checked is what is stored or sent. The CLI has no root (a user
// names any file they can read, links included), so the promise is about identity: the file
// opened and checked before anything is stored is the one whose bytes go out, whatever happens
// to its path meanwhile; and opening never waits on a FIFO.
import { execFileSync } from "node:child_process";
import { renameSync, symlinkSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { stowage } from "./support/cli.js";

const base = await tempDirectory("stowage-cli-inputs-");

/** The upload API and storage on 127.0.0.1: every URL granted, every PUT body kept. */
async function recordingServer() {
  const bodies: string[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    if (req.method === "PUT") {
      bodies.push(body.toString());
      res.writeHead(200).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    if (req.url?.endsWith("/complete")) {
      res.end(JSON.stringify({ filename: "notes.txt", size: 0, sizeFormatted: "0 B", lastModified: "" }));
      return;
    }
    const asked = JSON.parse(body.toString()) as { fileSize: number; sha256: string };
    res.end(
      JSON.stringify({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/storage/notes.txt`,
        key: "sessions/user/u/s1/artifacts/notes.txt",
        expiresIn: 900,
        headers: {
          "content-type": "text/plain",
          "content-length": String(asked.fileSize),
          "x-amz-checksum-sha256": Buffer.from(asked.sha256, "hex").toString("base64"),
        },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("stowage input files", () => {
  it("upload sends the file it opened and checked, even when its path is swapped before the upload", async () => {
    const cwd = join(base, "swap");
    await mkdir(join(cwd, "docs"), { recursive: true });
    await mkdir(join(cwd, "elsewhere"));
    await writeFile(join(cwd, "docs", "notes.txt"), "the file the user named\n");
    await writeFile(join(cwd, "elsewhere", "notes.txt"), "ANOTHER file, swapped in\n");
    const server = await recordingServer();
    let swapped = false;
    // The command reads the API's URL after it has opened its inputs and before it uploads:
    // the path is swapped exactly there (`docs` becomes a link to `elsewhere`).
    const env = {
      STOWAGE_DATA_DIR: join(cwd, ".stowage"),
      get STOWAGE_API_URL() {
        if (!swapped) {
          swapped = true;
          renameSync(join(cwd, "docs"), join(cwd, "docs-real"));
          symlinkSync(join(cwd, "elsewhere"), join(cwd, "docs"));
        }
        return server.url;
      },
    };
    try {
      await stowage(["upload", "docs/notes.txt", "--session", "s1", "--key", "stw_key"], { cwd, env });
    } finally {
      await server.close();
    }
    expect(swapped).toBe(true);
    expect(server.bodies).toEqual(["the file the user named\n"]);
  });

  it("refuses a FIFO at once, without waiting for a writer (INPUT_NOT_A_FILE)", async () => {
    const cwd = join(base, "fifo");
    await mkdir(cwd);
    execFileSync("mkfifo", [join(cwd, "pipe.txt")]);
    await symlink(join(cwd, "pipe.txt"), join(cwd, "pipe-link.txt"));
    const env = { STOWAGE_DATA_DIR: join(cwd, ".stowage") };
    for (const file of ["pipe.txt", "pipe-link.txt"]) {
      await expectStowageError(
        stowage(["blob", "put", file], { cwd, env }),
        "INVALID_INPUT",
        "INPUT_NOT_A_FILE",
      );
      await expectStowageError(
        stowage(["upload", file, "--session", "s1", "--key", "stw_key", "--api", "http://127.0.0.1:1"], {
          cwd,
          env,
        }),
        "INVALID_INPUT",
        "INPUT_NOT_A_FILE",
      );
    }
  });

  it("follows a link the user names: the CLI has no root, the user may read what they name", async () => {
    const cwd = join(base, "link");
    await mkdir(join(cwd, "real"), { recursive: true });
    await writeFile(join(cwd, "real", "notes.txt"), "through a link\n");
    await symlink(join(cwd, "real"), join(cwd, "alias"));
    const env = { STOWAGE_DATA_DIR: join(cwd, ".stowage") };
    const put = await stowage(["blob", "put", "alias/notes.txt", "--json"], { cwd, env });
    expect(JSON.parse(put.stdout)).toMatchObject([
      { file: "alias/notes.txt", size: "through a link\n".length },
    ]);
  });
});
