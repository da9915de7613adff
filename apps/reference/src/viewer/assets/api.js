// The viewer's only door to the server: every call carries the key in the Authorization header,
// so the key never appears in a URL (not even for images or the live stream).

/** An API error: the server's `{ error: message, code, reason?, details? }` and the HTTP status. */
export class ApiError extends Error {
  constructor(status, code, message, { reason, details } = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.reason = reason;
    this.details = details;
  }
}

/** An error as the viewer shows it: `CODE: message`. */
export function describeError(err) {
  return err?.code ? `${err.code}: ${err.message}` : String(err?.message ?? err);
}

/** Path segment for a URL, encoded (ids come from data and must not change the path). */
export const seg = (value) => encodeURIComponent(String(value));

async function errorOf(response) {
  const body = await response.json().catch(() => null);
  const wire = typeof body?.error === "string" && typeof body?.code === "string";
  return new ApiError(
    response.status,
    wire ? body.code : `HTTP_${response.status}`,
    wire ? body.error : `${response.status} ${response.statusText}`,
    { reason: wire ? body.reason : undefined, details: wire ? body.details : undefined },
  );
}

/** A client for the key; `onUnauthorized` runs when the server refuses the key (401). */
export function createApi(key, { onUnauthorized } = {}) {
  async function request(path, { signal, headers, method } = {}) {
    let response;
    try {
      response = await fetch(path, {
        ...(method ? { method } : {}),
        headers: { ...headers, authorization: `Bearer ${key}` },
        signal,
      });
    } catch (err) {
      if (err?.name === "AbortError") throw err;
      throw new ApiError(0, "NETWORK", `cannot reach the server (${err?.message ?? err})`);
    }
    if (!response.ok) {
      const error = await errorOf(response);
      if (response.status === 401) onUnauthorized?.(error);
      throw error;
    }
    return response;
  }

  const blobUrls = new Map();

  return {
    /** GET `path` and parse its JSON. */
    async json(path, options) {
      return (await request(path, { ...options, headers: { accept: "application/json" } })).json();
    },

    /** POST to `path` (no body) and parse the JSON it answers: a restore from the trash. */
    async post(path, options) {
      return (
        await request(path, { ...options, method: "POST", headers: { accept: "application/json" } })
      ).json();
    },

    /** DELETE `path` and parse the JSON it answers: a purge from the trash. */
    async delete(path, options) {
      return (
        await request(path, { ...options, method: "DELETE", headers: { accept: "application/json" } })
      ).json();
    },

    /**
     * Every page of a paged listing at `path` (`{ <field>: [...], cursor }`), followed to its end:
     * the first page's other fields, with `field` holding every page's items.
     */
    async allPages(path, field, options) {
      const separator = path.includes("?") ? "&" : "?";
      let first;
      let cursor;
      const items = [];
      do {
        const query = `limit=1000${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`;
        const page = await this.json(`${path}${separator}${query}`, options);
        first ??= page;
        items.push(...(page[field] ?? []));
        cursor = page.cursor ?? undefined;
      } while (cursor !== undefined);
      return { ...first, [field]: items, cursor: undefined };
    },

    /**
     * An object URL for the image at `path` (fetched with the key, once per page, keyed by
     * `path`). Rejects when the bytes are not an image, so that nothing else is ever shown as one.
     */
    image(path, label) {
      if (!blobUrls.has(path)) {
        const url = request(path).then(async (response) => {
          const blob = await response.blob();
          if (!blob.type.startsWith("image/")) {
            throw new ApiError(200, "NOT_AN_IMAGE", `${label} is ${blob.type || "not an image"}`);
          }
          return URL.createObjectURL(blob);
        });
        url.catch(() => blobUrls.delete(path));
        blobUrls.set(path, url);
      }
      return blobUrls.get(path);
    },

    /** An object URL for the blob with this SHA-256 (hex), as `image` fetches it. */
    blobImage(hash) {
      return this.image(`/blobs/${seg(hash)}`, `blob ${hash.slice(0, 12)}…`);
    },

    /**
     * Saves what `path` answers as `filename`: fetched with the key (a link cannot carry it), then
     * handed to the browser as a download from an object URL.
     */
    async download(path, filename) {
      const blob = await (await request(path)).blob();
      const url = URL.createObjectURL(blob);
      const link = document.createElement("a");
      link.href = url;
      link.download = filename;
      link.hidden = true;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    },

    /**
     * Reads the server-sent events at `path` (EventSource cannot send the key) and calls
     * `onEvent(name, data)` for each; resolves when the server ends the stream.
     */
    async events(path, { signal, onEvent }) {
      const response = await request(path, { signal, headers: { accept: "text/event-stream" } });
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value.replace(/\r\n/g, "\n");
        for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          dispatch(block, onEvent);
        }
      }
    },
  };
}

function dispatch(block, onEvent) {
  let name = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line === "" || line.startsWith(":")) continue; // comments are keepalives
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") name = value;
    else if (field === "data") data.push(value);
  }
  if (data.length > 0) onEvent(name, data.join("\n"));
}
