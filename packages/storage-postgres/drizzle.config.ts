import { defineConfig } from "drizzle-kit";

// `pnpm db:generate` writes the SQL migrations from src/schema.ts into drizzle/ (committed).
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/schema.ts",
  out: "./drizzle",
});
