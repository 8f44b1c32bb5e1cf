package dev.rookery.junit;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * A small client of Rookery's REST API ({@code /v1}, docs/rest.md), on {@link HttpClient}. Answers are decoded
 * by {@link Json}: objects are {@code Map<String, Object>}, arrays {@code List<Object>}, numbers {@code Long} or
 * {@code Double}.
 */
public final class RookeryClient {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  private final String baseUrl;
  private final String token;

  /** {@code baseUrl} such as {@code http://127.0.0.1:40124/v1}; {@code token} the bearer token or null. */
  public RookeryClient(String baseUrl, String token) {
    this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    this.token = token;
  }

  public String baseUrl() {
    return baseUrl;
  }

  /** One call ({@code path} below {@code /v1}, e.g. {@code "/mailboxes"}); the decoded answer, or null when empty. */
  public Object request(String method, String path, Object body) {
    return request(method, path, body, Duration.ofSeconds(30));
  }

  public Object request(String method, String path, Object body, Duration timeout) {
    HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(timeout).header("Accept", "application/json");
    if (token != null) req.header("Authorization", "Bearer " + token);
    // Every POST carries the JSON type, even without a body (the API answers 415 otherwise).
    boolean sends = body != null || method.equals("POST") || method.equals("PUT");
    if (sends) req.header("Content-Type", "application/json");
    req.method(method, sends ? HttpRequest.BodyPublishers.ofString(body == null ? "{}" : Json.write(body), StandardCharsets.UTF_8) : HttpRequest.BodyPublishers.noBody());
    HttpResponse<String> response;
    try {
      response = HTTP.send(req.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException err) {
      throw new RookeryException(method + " " + path + ": " + err, 0, null, err);
    } catch (InterruptedException err) {
      Thread.currentThread().interrupt();
      throw new RookeryException(method + " " + path + ": interrupted", 0, null, err);
    }
    String text = response.body();
    if (response.statusCode() >= 400) {
      String code = null;
      String message = text;
      try {
        Object error = asMap(Json.parse(text)).get("error");
        code = (String) asMap(error).get("code");
        message = code + " " + asMap(error).get("message");
      } catch (RuntimeException notTheErrorShape) {
        // the status alone says it
      }
      throw new RookeryException(method + " " + path + ": HTTP " + response.statusCode() + ": " + message, response.statusCode(), code, null);
    }
    return text.isEmpty() ? null : Json.parse(text);
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> asMap(Object value) {
    if (!(value instanceof Map)) throw new RookeryException("expected a JSON object, got " + Json.write(value));
    return (Map<String, Object>) value;
  }

  @SuppressWarnings("unchecked")
  static List<Object> asList(Object value) {
    if (!(value instanceof List)) throw new RookeryException("expected a JSON array, got " + Json.write(value));
    return (List<Object>) value;
  }

  /** One URL segment: a mailbox path is one segment, its separators encoded ({@code Work%2FProjects}). */
  public static String segment(String name) {
    return URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** Deliver a message as UTF-8 text; answers {@code {uid, uidvalidity}}. */
  public Map<String, Object> addMessage(String mailbox, String raw) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("raw", raw);
    return asMap(request("POST", "/mailboxes/" + segment(mailbox) + "/messages", body));
  }

  /** Deliver a message of any bytes (sent as base64), with flags (may be empty). */
  public Map<String, Object> addMessage(String mailbox, byte[] raw, List<String> flags) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("raw", Base64.getEncoder().encodeToString(raw));
    body.put("encoding", "base64");
    if (!flags.isEmpty()) body.put("flags", flags);
    return asMap(request("POST", "/mailboxes/" + segment(mailbox) + "/messages", body));
  }

  /** The messages of a mailbox (uid, flags, internaldate, size, modseq). */
  public List<Object> messages(String mailbox) {
    return asList(request("GET", "/mailboxes/" + segment(mailbox) + "/messages", null));
  }

  public List<Object> mailboxes() {
    return asList(request("GET", "/mailboxes", null));
  }

  public Object createMailbox(String path) {
    return request("POST", "/mailboxes", Map.of("path", path));
  }

  public List<Object> sessions() {
    return asList(request("GET", "/sessions", null));
  }

  public Map<String, Object> health() {
    return asMap(request("GET", "/health", null));
  }

  /** Mailboxes, users, script rules and sessions back to the options' (done before each test). */
  public void reset() {
    request("POST", "/reset", null);
  }

  /** A {@code mark} event (docs/events.md): {@code phase} {@code start}, {@code end} or null; {@code outcome} {@code pass}/{@code fail} with {@code end}. Answers the event id. */
  public long mark(String text, String phase, String outcome) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("text", text);
    if (phase != null) body.put("phase", phase);
    if (outcome != null) body.put("outcome", outcome);
    return ((Number) asMap(request("POST", "/events/mark", body)).get("id")).longValue();
  }

  /** The newest event id: a {@code since} for a later {@link #waitFor}. */
  public long latestEvent() {
    return ((Number) asMap(request("GET", "/events/latest", null)).get("id")).longValue();
  }

  /**
   * Long-poll {@code GET /v1/events/wait} with these query parameters, e.g. {@code Map.of("types", "mark",
   * "since", "4")} or a state {@code Map.of("mailbox", "INBOX", "messages", "2")}; RookeryException with status
   * 408 and code {@code TIMEOUT} when nothing matches within {@code timeout}.
   */
  public Map<String, Object> waitFor(Map<String, String> query, Duration timeout) {
    StringJoiner q = new StringJoiner("&", "?", "");
    q.add("timeout=" + timeout.toMillis());
    for (Map.Entry<String, String> e : query.entrySet()) q.add(segment(e.getKey()) + "=" + segment(e.getValue()));
    return asMap(request("GET", "/events/wait" + q, null, timeout.plusSeconds(10)));
  }

  /** The client checker's findings (docs/client-check.md). */
  public Object clientFindings() {
    return request("GET", "/client/findings", null);
  }

  /** Asks the server to stop (graceful); the process then exits. */
  public void shutdown() {
    request("POST", "/shutdown", null);
  }
}
