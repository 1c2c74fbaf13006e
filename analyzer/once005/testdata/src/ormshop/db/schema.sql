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
