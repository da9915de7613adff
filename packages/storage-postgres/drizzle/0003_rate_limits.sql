CREATE TABLE "rate_limits" (
	"key" text COLLATE "C" PRIMARY KEY NOT NULL,
	"points" integer DEFAULT 0 NOT NULL,
	"expire" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "idx_rate_limits_expire" ON "rate_limits" USING btree ("expire");