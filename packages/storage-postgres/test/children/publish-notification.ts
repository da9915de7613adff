import { connectPostgres } from "../../src/connect-postgres.js";
import { createPostgresNotifier } from "../../src/notifier.js";

// Another app process announcing a change: argv = url, schema, channel, topic, message.
const [url, schema, channel, topic, message] = process.argv.slice(2);
const connection = await connectPostgres({ url: url!, schema: schema!, maxConnections: 1 });
const notifier = createPostgresNotifier({ connection, channel: channel! });
await notifier.publish(topic!, message!);
await notifier.close();
await connection.close();
