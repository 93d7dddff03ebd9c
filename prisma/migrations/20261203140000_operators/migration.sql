-- Operators with names (API.md, "Operators with names"; docs/decisions/0057-operator-roles.md):
-- each person who runs the operator API has an account, roles and a token of their own, so
-- that the audit log names them and a route can refuse a role. OPERATOR_TOKEN stays as the
-- break-glass account root, which is configuration, not a row.
CREATE TABLE "operator" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    -- Stored lower-case, so that one person cannot get two accounts by spelling.
    "email" TEXT NOT NULL,
    "roles" TEXT[] NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "operator_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "operator_email_check" CHECK ("email" = lower("email") AND length("email") BETWEEN 3 AND 254),
    -- At least one role, each a known one (api/operators/roles.ts), no NULL; that none is
    -- listed twice is the API's check (uniqueItems), which a CHECK cannot state without a function.
    CONSTRAINT "operator_roles_check" CHECK (
        cardinality("roles") BETWEEN 1 AND 5
        AND "roles" <@ ARRAY['viewer', 'support', 'finance', 'catalogue', 'admin']::TEXT[]
        AND array_position("roles", NULL) IS NULL
    ),
    CONSTRAINT "operator_status_check" CHECK ("status" IN ('active', 'disabled'))
);
CREATE UNIQUE INDEX "operator_email_key" ON "operator"("email");

-- An operator's tokens, as SHA-256 hashes of secrets shown once (like api_token). Rotating
-- revokes the live one and adds another in one transaction; at most one is live at a time.
CREATE TABLE "operator_token" (
    "id" TEXT NOT NULL,
    "operator_id" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "revoked_at" TIMESTAMPTZ(3),
    CONSTRAINT "operator_token_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "operator_token_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "operator"("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "operator_token_token_hash_key" ON "operator_token"("token_hash");
CREATE INDEX "operator_token_operator_id_idx" ON "operator_token"("operator_id");
CREATE UNIQUE INDEX "operator_token_live_key" ON "operator_token"("operator_id") WHERE "revoked_at" IS NULL;
