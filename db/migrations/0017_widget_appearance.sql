ALTER TABLE "widget_clients" ADD COLUMN "appearance" jsonb DEFAULT '{}'::jsonb NOT NULL;
