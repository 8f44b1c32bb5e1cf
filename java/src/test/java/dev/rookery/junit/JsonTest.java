package dev.rookery.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The hand-written JSON, against RFC 8259's grammar and its examples. */
class JsonTest {
  @Test
  void decodesTheRfcsObjectExample() {
    // RFC 8259 section 13, shortened
    Object value = Json.parse("{\"Image\": {\"Width\": 800, \"Height\": 600, \"Title\": \"View from 15th Floor\","
        + " \"Thumbnail\": {\"Url\": \"http://www.example.com/image/481989943\", \"Width\": \"100\"}, \"Animated\" : false,"
        + " \"IDs\": [116, 943, 234, 38793]}}");
    Map<String, Object> image = RookeryClient.asMap(RookeryClient.asMap(value).get("Image"));
    assertEquals(800L, image.get("Width"));
    assertEquals(false, image.get("Animated"));
    assertEquals(List.of(116L, 943L, 234L, 38793L), image.get("IDs"));
    assertEquals("100", RookeryClient.asMap(image.get("Thumbnail")).get("Width"));
  }

  @Test
  void decodesNumbersEscapesAndLiterals() {
    assertEquals(Arrays.asList(0L, -1L, 1.5, -0.25e2, Double.POSITIVE_INFINITY, 9.223372036854775808E18, true, null),
        Json.parse(" [0, -1, 1.5, -0.25e2, 1e400, 9223372036854775808, true, null] "));
    assertEquals("a\"b\\c/d\b\f\n\r\t\u00e9\ud834\udd1e", Json.parse("\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00E9\\ud834\\udd1e\""));
    assertEquals("\u00fc\ud83d\ude00", Json.parse("\"\u00fc\ud83d\ude00\""));
    assertEquals(Map.of(), Json.parse("{}"));
    assertEquals(List.of(List.of()), Json.parse("[[]]"));
  }

  @Test
  void refusesWhatTheGrammarDoesNot() {
    for (String bad : new String[] {"", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "-", "1e", "+1", "[1 2]", "{a:1}", "'a'", "\"\\x\"", "\"\u0001\"",
        "\"\\u12\"", "tru", "nul", "[1] x", "{\"a\" 1}", "\"open"}) {
      assertThrows(IllegalArgumentException.class, () -> Json.parse(bad), bad);
    }
    assertThrows(IllegalArgumentException.class, () -> Json.parse("[".repeat(Json.MAX_DEPTH + 2) + "]".repeat(Json.MAX_DEPTH + 2)));
  }

  @Test
  void encodesAsciiOnlyAndRoundTrips() {
    Map<String, Object> value = new LinkedHashMap<>();
    value.put("text", "line\r\n\"quoted\" \\ \u0000 \u00e9 \ud83d\ude00 \ud800");
    value.put("n", 42);
    value.put("x", 1.5);
    value.put("whole", 3.0);
    value.put("list", List.of(true, "b"));
    value.put("none", null);
    String text = Json.write(value);
    assertEquals("{\"text\":\"line\\r\\n\\\"quoted\\\" \\\\ \\u0000 \\u00e9 \\ud83d\\ude00 \\ud800\",\"n\":42,\"x\":1.5,\"whole\":3,\"list\":[true,\"b\"],\"none\":null}", text);
    Map<String, Object> back = RookeryClient.asMap(Json.parse(text));
    assertEquals(value.get("text"), back.get("text"));
    assertEquals(42L, back.get("n"));
    assertThrows(IllegalArgumentException.class, () -> Json.write(Double.NaN));
    assertThrows(IllegalArgumentException.class, () -> Json.write(new Object()));
  }
}
