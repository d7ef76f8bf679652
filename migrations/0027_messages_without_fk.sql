ALTER TABLE "messages" DROP CONSTRAINT "messages_conversation_id_conversations_id_fk";
--> statement-breakpoint
-- A conversation's messages go with it, as the foreign key's cascade did, without
-- a key-share lock of the conversation's row at every message saved. It fires after
-- the cascades to the conversation's runs (triggers fire in the order of their names,
-- and "RI_ConstraintTrigger_..." comes first), which wait for a save holding one of
-- those runs' rows: what that save wrote is committed then, and this statement sees it.
CREATE FUNCTION loopd_delete_conversation_messages() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM messages WHERE conversation_id = OLD.id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER messages_go_with_conversation AFTER DELETE ON conversations
  FOR EACH ROW EXECUTE FUNCTION loopd_delete_conversation_messages();
