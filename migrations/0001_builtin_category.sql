-- Category 1 is the built-in default icon: owned by no account, usable by all,
-- changeable by none. Existing clients send "category": 1 unconditionally.
-- Its image is bundled with the Worker and served under the key below.
INSERT INTO `categories` (`id`, `account_id`, `name`, `image_key`) VALUES (1, NULL, 'Default', 'builtin/default-pin.png');
