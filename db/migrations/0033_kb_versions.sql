-- The version of an account's knowledge-base documents (visitors' own files aside): the answer path compares it with the vocabulary a process keeps (lib/knowledge/typos.ts) by one key lookup, where counting the documents read every one of them for each question.
CREATE TABLE "kb_versions" (
	"account_id" integer PRIMARY KEY NOT NULL REFERENCES "accounts"("id"),
	"version" bigint DEFAULT 0 NOT NULL
);--> statement-breakpoint
-- One rule for "the knowledge base changed" (documents but visitors' own files, curated answers, synonyms), whichever code path wrote it: a document counts up the account's kb_versions; every change counts for the answer tests of an account that has some (the row lock makes a run that claims after the change see it).
CREATE FUNCTION "kb_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  acc integer;
BEGIN
  -- Nested IFs: only a kb_documents row has conversation_id (an AND would read the field of any row).
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
  IF TG_TABLE_NAME = 'kb_documents' THEN
    INSERT INTO kb_versions (account_id, version) VALUES (acc, 1)
    ON CONFLICT (account_id) DO UPDATE SET version = kb_versions.version + 1;
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
DROP TRIGGER "answer_tests_kb_documents" ON "kb_documents";--> statement-breakpoint
DROP TRIGGER "answer_tests_curated_answers" ON "curated_answers";--> statement-breakpoint
DROP TRIGGER "answer_tests_synonym_groups" ON "synonym_groups";--> statement-breakpoint
DROP FUNCTION "answer_tests_kb_changed"();--> statement-breakpoint
CREATE TRIGGER "kb_documents_changed" AFTER INSERT OR UPDATE OR DELETE ON "kb_documents" FOR EACH ROW EXECUTE FUNCTION "kb_changed"();--> statement-breakpoint
CREATE TRIGGER "curated_answers_changed" AFTER INSERT OR UPDATE OR DELETE ON "curated_answers" FOR EACH ROW EXECUTE FUNCTION "kb_changed"();--> statement-breakpoint
CREATE TRIGGER "synonym_groups_changed" AFTER INSERT OR UPDATE OR DELETE ON "synonym_groups" FOR EACH ROW EXECUTE FUNCTION "kb_changed"();
