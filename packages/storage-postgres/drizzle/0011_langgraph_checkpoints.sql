CREATE TABLE "langgraph_checkpoints" (
	"namespace" text COLLATE "C" NOT NULL,
	"thread_id" text COLLATE "C" NOT NULL,
	"checkpoint_ns" text COLLATE "C" NOT NULL,
	"checkpoint_id" text COLLATE "C" NOT NULL,
	"parent_id" text,
	"checkpoint" "bytea" NOT NULL,
	"metadata" "bytea" NOT NULL,
	"versions" text NOT NULL,
	CONSTRAINT "langgraph_checkpoints_pkey" PRIMARY KEY("namespace","thread_id","checkpoint_ns","checkpoint_id")
);
--> statement-breakpoint
CREATE TABLE "langgraph_values" (
	"namespace" text COLLATE "C" NOT NULL,
	"thread_id" text COLLATE "C" NOT NULL,
	"checkpoint_ns" text COLLATE "C" NOT NULL,
	"channel" text COLLATE "C" NOT NULL,
	"version" text COLLATE "C" NOT NULL,
	"type" text NOT NULL,
	"value" "bytea" NOT NULL,
	CONSTRAINT "langgraph_values_pkey" PRIMARY KEY("namespace","thread_id","checkpoint_ns","channel","version")
);
--> statement-breakpoint
CREATE TABLE "langgraph_writes" (
	"namespace" text COLLATE "C" NOT NULL,
	"thread_id" text COLLATE "C" NOT NULL,
	"checkpoint_ns" text COLLATE "C" NOT NULL,
	"checkpoint_id" text COLLATE "C" NOT NULL,
	"task_id" text COLLATE "C" NOT NULL,
	"idx" integer NOT NULL,
	"task_path" text NOT NULL,
	"channel" text NOT NULL,
	"type" text NOT NULL,
	"value" "bytea" NOT NULL,
	CONSTRAINT "langgraph_writes_pkey" PRIMARY KEY("namespace","thread_id","checkpoint_ns","checkpoint_id","task_id","idx")
);
