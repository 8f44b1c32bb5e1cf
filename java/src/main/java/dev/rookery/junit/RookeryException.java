package dev.rookery.junit;

/**
 * A REST call answered an error ({@link #status()} and the API's {@link #code()}: {@code INVALID},
 * {@code NONEXISTENT}, {@code TIMEOUT}, ...), or the command could not be found or started.
 */
public class RookeryException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int status;
  private final String code;

  public RookeryException(String message) {
    this(message, 0, null, null);
  }

  public RookeryException(String message, int status, String code, Throwable cause) {
    super(message, cause);
    this.status = status;
    this.code = code;
  }

  /** The HTTP status of an error answer; 0 when the failure was not an answer. */
  public int status() {
    return status;
  }

  /** The error's {@code code} from the answer's body, or null. */
  public String code() {
    return code;
  }
}
