-- A post that names no conversation or edit chain starts its own: rows
-- written by bulk loads and operators' SQL (INSERT ... SELECT, COPY) get
-- conversation_id = edit_root_id = id, as CreatePost sets them.
CREATE FUNCTION posts_self_references() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.conversation_id := COALESCE(NEW.conversation_id, NEW.id);
  NEW.edit_root_id := COALESCE(NEW.edit_root_id, NEW.id);
  RETURN NEW;
END
$$;

CREATE TRIGGER posts_self_references BEFORE INSERT ON posts
  FOR EACH ROW WHEN (NEW.conversation_id IS NULL OR NEW.edit_root_id IS NULL)
  EXECUTE FUNCTION posts_self_references();
