CREATE TABLE referrals (
	id bigserial PRIMARY KEY,
	code text NOT NULL,
	owner_id bigint NOT NULL,
	CONSTRAINT referrals_code_key UNIQUE (code)
);

CREATE TABLE coupons_used (
	id bigserial PRIMARY KEY,
	coupon text NOT NULL
);

CREATE TABLE feed_keys (
	feed_id bigint NOT NULL,
	key text NOT NULL,
	CONSTRAINT feed_keys_uniq UNIQUE (feed_id, key)
);
