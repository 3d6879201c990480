-- Run once, on the first start after initialization (mariadbd --init-file).
-- root may connect from anywhere over TCP with an empty password, as the lab expects.
CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;
FLUSH PRIVILEGES;
