package io.rdmaflux.samples;

/**
 * A problem with what the user asked for (missing input, bad value, unreachable peer): printed as
 * one line without a stack trace unless {@code --verbose}.
 */
final class UserError extends RuntimeException {
    UserError(String message) {
        super(message);
    }

    UserError(String message, Throwable cause) {
        super(message, cause);
    }
}
