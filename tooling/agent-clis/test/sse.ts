/** One server-sent event as a client reads it: the `event:` name (if any) and the `data:` text. */
export interface ReadEvent {
  event: string | undefined;
  data: string;
}

/** Parses a whole `text/event-stream` body by the format's rules (blank line ends an event). */
export function parseEventStream(body: string): ReadEvent[] {
  return body
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      let event: string | undefined;
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice("event:".length).trim();
        else if (line.startsWith("data:")) data.push(line.slice("data:".length).trimStart());
      }
      return { event, data: data.join("\n") };
    });
}
