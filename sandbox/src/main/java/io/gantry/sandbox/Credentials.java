package io.gantry.sandbox;

/** A MySQL account name and password. */
public record Credentials(String user, String password) {
}
