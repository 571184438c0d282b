-- The version of an account's knowledge-base documents (visitors' own files aside): the answer path compares it with the vocabulary a process keeps (lib/knowledge/typos.ts) by one key lookup, where counting the documents read every one of them for each question.
CREATE TABLE "kb_versions" (
	"account_id" integer PRIMARY KEY NOT NULL REFERENCES "accounts"("id"),
	"version" bigint DEFAULT 0 NOT NULL
);--> statement-breakpoint
CREATE FUNCTION "kb_documents_version"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  acc integer;
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.conversation_id IS NOT NULL THEN RETURN NULL; END IF;
    acc := OLD.account_id;
  ELSE
    IF NEW.conversation_id IS NOT NULL THEN RETURN NULL; END IF;
    acc := NEW.account_id;
  END IF;
  INSERT INTO kb_versions (account_id, version) VALUES (acc, 1)
  ON CONFLICT (account_id) DO UPDATE SET version = kb_versions.version + 1;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "kb_documents_version" AFTER INSERT OR UPDATE OR DELETE ON "kb_documents" FOR EACH ROW EXECUTE FUNCTION "kb_documents_version"();
