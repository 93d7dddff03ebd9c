-- The audit trail (API.md, "Operators with names"; docs/decisions/0058-audit-trail.md): the
-- operator audit log becomes append-only and hash-chained. Each row carries its place in the
-- chain (seq, from 1 without a gap) and a SHA-256 over its fields and the previous row's hash,
-- so an edited, deleted or inserted row breaks the chain at that place, which the verifier
-- (core/domain/audit-chain.ts, `npm run audit:verify`) names. The database computes the chain
-- on insert, whoever inserts (the API, the worker, the admin CLI), so no writer can forget it.

-- Who, with which roles, how it ended and from where: the call's own row says it; rows the
-- service writes for itself (and those from before the trail) leave them empty.
ALTER TABLE "operator_audit_log"
    ADD COLUMN "seq" BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN "operator_roles" TEXT[],
    ADD COLUMN "outcome" TEXT,
    ADD COLUMN "status_code" INTEGER,
    ADD COLUMN "request_id" TEXT,
    ADD COLUMN "ip" TEXT,
    ADD COLUMN "user_agent" TEXT,
    ADD COLUMN "prev_hash" TEXT,
    ADD COLUMN "hash" TEXT NOT NULL DEFAULT '',
    ADD CONSTRAINT "operator_audit_log_outcome_check" CHECK ("outcome" IN ('done', 'denied', 'failed', 'pending'));

-- The chain's head: the last row's place and hash. Its one row is locked by each insert until
-- that transaction ends, so rows join the chain one at a time, in the order they commit.
CREATE TABLE "audit_chain_head" (
    "id" INTEGER NOT NULL,
    "seq" BIGINT NOT NULL,
    "hash" TEXT,
    CONSTRAINT "audit_chain_head_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "audit_chain_head_one_row_check" CHECK ("id" = 1)
);

-- One field as the hash reads it: its length in UTF-8 bytes, a colon and the field; '-' for
-- NULL. Lengths keep field boundaries unambiguous whatever a field holds.
CREATE FUNCTION audit_field(v TEXT) RETURNS TEXT
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT CASE WHEN v IS NULL THEN '-' ELSE octet_length(v)::TEXT || ':' || v END $$;

-- The row's hash: every field but the hash itself, in this order, then the previous row's hash.
-- The verifier computes the same in TypeScript from the fields as text (core/domain/audit-chain.ts).
CREATE FUNCTION audit_row_hash(r "operator_audit_log") RETURNS TEXT
    LANGUAGE sql STABLE
    AS $$
    SELECT encode(sha256(convert_to(
               audit_field(r.seq::TEXT) || audit_field(r.id)
               || audit_field(((extract(epoch FROM r.created_at) * 1000)::BIGINT)::TEXT)
               || audit_field(r.actor) || audit_field(array_to_string(r.operator_roles, ','))
               || audit_field(r.action) || audit_field(r.target_id) || audit_field(r.outcome)
               || audit_field(r.status_code::TEXT) || audit_field(r.request_id) || audit_field(r.ip)
               || audit_field(r.user_agent) || audit_field(r.details::TEXT) || audit_field(r.prev_hash),
               'UTF8')), 'hex')
    $$;

-- The rows written before the trail, chained in the order they were written.
DO $$
DECLARE
    r RECORD;
    n BIGINT := 0;
    h TEXT := NULL;
BEGIN
    FOR r IN SELECT id FROM "operator_audit_log" ORDER BY "created_at", "id" LOOP
        n := n + 1;
        UPDATE "operator_audit_log" SET "seq" = n, "prev_hash" = h WHERE "id" = r.id;
        SELECT audit_row_hash(l) INTO h FROM "operator_audit_log" l WHERE l."id" = r.id;
        UPDATE "operator_audit_log" SET "hash" = h WHERE "id" = r.id;
    END LOOP;
    INSERT INTO "audit_chain_head" ("id", "seq", "hash") VALUES (1, n, h);
END
$$;

CREATE UNIQUE INDEX "operator_audit_log_seq_key" ON "operator_audit_log"("seq");
CREATE INDEX "operator_audit_log_actor_created_at_idx" ON "operator_audit_log"("actor", "created_at");
CREATE INDEX "operator_audit_log_target_id_idx" ON "operator_audit_log"("target_id");
CREATE INDEX "operator_audit_log_request_id_idx" ON "operator_audit_log"("request_id");

-- Every insert takes the next place: whatever seq and hashes it was given are replaced.
CREATE FUNCTION audit_log_chain() RETURNS TRIGGER
    LANGUAGE plpgsql
    AS $$
DECLARE
    head "audit_chain_head"%ROWTYPE;
BEGIN
    SELECT * INTO head FROM "audit_chain_head" WHERE "id" = 1 FOR UPDATE;
    NEW."seq" := head."seq" + 1;
    NEW."prev_hash" := head."hash";
    NEW."hash" := audit_row_hash(NEW);
    UPDATE "audit_chain_head" SET "seq" = NEW."seq", "hash" = NEW."hash" WHERE "id" = 1;
    RETURN NEW;
END
$$;
CREATE TRIGGER "operator_audit_log_chain" BEFORE INSERT ON "operator_audit_log"
    FOR EACH ROW EXECUTE FUNCTION audit_log_chain();

-- Append-only: no UPDATE, DELETE or TRUNCATE, whoever asks. Only the table's owner can switch
-- these triggers off; what it then changes breaks the chain, and the verifier finds it. The
-- privileges are revoked too, for deployments whose service role is not the owner.
CREATE FUNCTION audit_log_refuse_change() RETURNS TRIGGER
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'operator_audit_log is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER "operator_audit_log_append_only" BEFORE UPDATE OR DELETE ON "operator_audit_log"
    FOR EACH ROW EXECUTE FUNCTION audit_log_refuse_change();
CREATE TRIGGER "operator_audit_log_no_truncate" BEFORE TRUNCATE ON "operator_audit_log"
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_refuse_change();
REVOKE UPDATE, DELETE, TRUNCATE ON "operator_audit_log" FROM PUBLIC;
