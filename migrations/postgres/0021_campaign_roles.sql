-- (See the SQLite migration.)
-- A person's role is held per campaign: one role (validator, author or participant) per
-- person and campaign; admins are server-wide. A validator's role in a campaign is their
-- place in its pool (write::accounts adds the two together).
CREATE TABLE campaign_members (
    campaign_id  BIGINT NOT NULL REFERENCES campaigns (id),
    user_id      BIGINT  NOT NULL REFERENCES users (id),
    role         TEXT    NOT NULL CHECK (role IN ('validator', 'author', 'participant')),
    PRIMARY KEY (campaign_id, user_id)
);
CREATE INDEX campaign_members_user ON campaign_members (user_id);

-- The roles accounts held before keep what they allowed: a validator in each campaign
-- whose pool they are in; an author or participant in every campaign.
INSERT INTO campaign_members (campaign_id, user_id, role)
SELECT p.campaign_id, p.user_id, 'validator'
FROM pool_members p JOIN users u ON u.id = p.user_id
WHERE u.role = 'validator';
INSERT INTO campaign_members (campaign_id, user_id, role)
SELECT c.id, u.id, u.role
FROM users u CROSS JOIN campaigns c
WHERE u.role IN ('author', 'participant');

ALTER TABLE users ADD COLUMN is_admin BIGINT NOT NULL DEFAULT 0 CHECK (is_admin IN (0, 1));
UPDATE users SET is_admin = 1 WHERE role = 'admin';
ALTER TABLE users DROP COLUMN role;
