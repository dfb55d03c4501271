package io.gantry.console.hosts;

/**
 * One row of {@code SHOW GANTRY BLOCKED HOSTS}, as the engine wrote it.
 *
 * @param since       when the host was blocked (ISO-8601 UTC)
 * @param secondsLeft how long it stays blocked unless lifted, when the list was read
 */
public record BlockedHost(String host, String reason, String failures, String since, String secondsLeft) {
}
