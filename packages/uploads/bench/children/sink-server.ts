// Child process for the streaming-upload bench: the upload API and storage, as small as they come,
// so that the uploading parent's memory is measured alone. It grants a URL to itself, hashes and
// drops every PUT body, and answers completions. Prints its base URL, then serves until killed.
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    if (req.method === "PUT") {
      hash.update(chunk);
      size += chunk.byteLength;
    } else chunks.push(chunk);
  }
  const url = req.url ?? "/";
  res.setHeader("content-type", "application/json");
  if (req.method === "POST" && url.endsWith("/upload-url")) {
    const body = JSON.parse(Buffer.concat(chunks).toString()) as { contentType: string; fileSize: number };
    const { port } = server.address() as AddressInfo;
    res.end(
      JSON.stringify({
        url: `http://127.0.0.1:${port}/put`,
        key: "bench",
        expiresIn: 900,
        headers: { "content-type": body.contentType, "content-length": String(body.fileSize) },
      }),
    );
  } else if (req.method === "PUT") {
    hash.digest();
    res.end(JSON.stringify({ size }));
  } else {
    res.end(
      JSON.stringify({
        filename: "bench",
        size: 0,
        sizeFormatted: "0 B",
        lastModified: new Date().toISOString(),
      }),
    );
  }
});
server.listen(0, "127.0.0.1", () => {
  console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
});
