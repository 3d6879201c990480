-- Run once, on the first start after initialization (mysqld --init-file).
-- root may connect from anywhere over TCP, with caching_sha2_password (9.x has no other built-in
-- password plugin); the entrypoint appends its password when MYSQL_ROOT_PASSWORD is set.
CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED WITH caching_sha2_password BY '';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;
FLUSH PRIVILEGES;
