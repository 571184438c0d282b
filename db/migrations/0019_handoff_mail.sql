-- The waiting episode whose members' notification was written (mailed when >= waiting_since).
ALTER TABLE "conversations" ADD COLUMN "waiting_mailed_at" timestamp (3) with time zone;
