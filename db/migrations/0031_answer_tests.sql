-- Answer tests (docs/contracts.md §20, docs/decisions/answer-tests.md): the cases, and per account the knowledge-base changes not yet tested.
CREATE TABLE "answer_test_cases" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" integer NOT NULL REFERENCES "accounts"("id"),
	"question" text NOT NULL,
	"expect" text NOT NULL,
	"value" text DEFAULT '' NOT NULL,
	"source_kind" text,
	"source_id" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"seq" bigserial NOT NULL,
	"last_passed" boolean,
	"last_first_source" text,
	"last_answer" text,
	"last_run_at" timestamp (3) with time zone,
	"prev_passed" boolean
);--> statement-breakpoint
CREATE INDEX "answer_test_cases_account_idx" ON "answer_test_cases" USING btree ("account_id","seq");--> statement-breakpoint
CREATE TABLE "answer_test_state" (
	"account_id" integer PRIMARY KEY NOT NULL REFERENCES "accounts"("id"),
	"kb_version" bigint DEFAULT 0 NOT NULL,
	"tested_version" bigint DEFAULT 0 NOT NULL,
	"kb_changed_at" timestamp (3) with time zone,
	"due_since" timestamp (3) with time zone,
	"lease_until" timestamp (3) with time zone,
	"last_run_at" timestamp (3) with time zone,
	"last_trigger" text,
	"last_passed_count" integer,
	"last_failed_count" integer
);--> statement-breakpoint
-- Every write of the knowledge base (documents but visitors' own files, curated answers, synonyms), whichever code path made it, counts one change for an account that has tests; the row lock makes a run that claims after the change see it.
CREATE FUNCTION "answer_tests_kb_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  acc integer;
BEGIN
  IF TG_OP = 'DELETE' THEN
    acc := OLD.account_id;
    IF TG_TABLE_NAME = 'kb_documents' THEN
      IF OLD.conversation_id IS NOT NULL THEN RETURN NULL; END IF;
    END IF;
  ELSE
    acc := NEW.account_id;
    IF TG_TABLE_NAME = 'kb_documents' THEN
      IF NEW.conversation_id IS NOT NULL THEN RETURN NULL; END IF;
    END IF;
  END IF;
  IF EXISTS (SELECT 1 FROM answer_test_cases WHERE account_id = acc) THEN
    INSERT INTO answer_test_state (account_id, kb_version, kb_changed_at, due_since) VALUES (acc, 1, clock_timestamp(), clock_timestamp())
    ON CONFLICT (account_id) DO UPDATE SET
      kb_version = answer_test_state.kb_version + 1,
      kb_changed_at = clock_timestamp(),
      due_since = CASE WHEN answer_test_state.kb_version = answer_test_state.tested_version THEN clock_timestamp() ELSE answer_test_state.due_since END;
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "answer_tests_kb_documents" AFTER INSERT OR UPDATE OR DELETE ON "kb_documents" FOR EACH ROW EXECUTE FUNCTION "answer_tests_kb_changed"();--> statement-breakpoint
CREATE TRIGGER "answer_tests_curated_answers" AFTER INSERT OR UPDATE OR DELETE ON "curated_answers" FOR EACH ROW EXECUTE FUNCTION "answer_tests_kb_changed"();--> statement-breakpoint
CREATE TRIGGER "answer_tests_synonym_groups" AFTER INSERT OR UPDATE OR DELETE ON "synonym_groups" FOR EACH ROW EXECUTE FUNCTION "answer_tests_kb_changed"();
