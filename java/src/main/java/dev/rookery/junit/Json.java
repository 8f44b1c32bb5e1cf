package dev.rookery.junit;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The little JSON the REST API needs, so the extension brings no library.
 *
 * <p>Decoding gives {@code Map<String, Object>} (insertion ordered), {@code List<Object>}, {@code String},
 * {@code Long} (integers that fit) or {@code Double}, {@code Boolean} and {@code null}. Encoding takes the same
 * kinds (any {@code Map} with string keys, any {@code Iterable} or array, any {@code Number}); it writes ASCII
 * only, everything else as {@code \\uXXXX}, so a lone surrogate survives instead of becoming {@code ?} in UTF-8.
 */
public final class Json {
  /** Deeper nesting than this is refused: the decoder recurses, and a hostile body must not overflow the stack. */
  static final int MAX_DEPTH = 512;

  private Json() {}

  /** The JSON text of {@code value}. */
  public static String write(Object value) {
    StringBuilder out = new StringBuilder();
    write(out, value, 0);
    return out.toString();
  }

  private static void write(StringBuilder out, Object value, int depth) {
    if (depth > MAX_DEPTH) throw new IllegalArgumentException("JSON: nested deeper than " + MAX_DEPTH);
    if (value == null) {
      out.append("null");
    } else if (value instanceof String) {
      string(out, (String) value);
    } else if (value instanceof Boolean) {
      out.append(value.toString());
    } else if (value instanceof Double || value instanceof Float) {
      double d = ((Number) value).doubleValue();
      if (Double.isNaN(d) || Double.isInfinite(d)) throw new IllegalArgumentException("JSON has no " + d);
      if (d == Math.rint(d) && Math.abs(d) < 1e15) out.append((long) d);
      else out.append(d);
    } else if (value instanceof Number) {
      out.append(value.toString());
    } else if (value instanceof Map) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
        if (!(e.getKey() instanceof String)) throw new IllegalArgumentException("JSON object keys are strings, got " + e.getKey());
        if (!first) out.append(',');
        first = false;
        string(out, (String) e.getKey());
        out.append(':');
        write(out, e.getValue(), depth + 1);
      }
      out.append('}');
    } else if (value instanceof Iterable) {
      out.append('[');
      boolean first = true;
      for (Object item : (Iterable<?>) value) {
        if (!first) out.append(',');
        first = false;
        write(out, item, depth + 1);
      }
      out.append(']');
    } else if (value instanceof Object[]) {
      write(out, List.of((Object[]) value), depth);
    } else {
      throw new IllegalArgumentException("not a JSON value: " + value.getClass().getName());
    }
  }

  private static void string(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"': out.append("\\\""); break;
        case '\\': out.append("\\\\"); break;
        case '\n': out.append("\\n"); break;
        case '\r': out.append("\\r"); break;
        case '\t': out.append("\\t"); break;
        default:
          if (c < 0x20 || c >= 0x7f) out.append(String.format("\\u%04x", (int) c));
          else out.append(c);
      }
    }
    out.append('"');
  }

  /** The value of a JSON text (RFC 8259); IllegalArgumentException with the offset when it is not one. */
  public static Object parse(String text) {
    Parser p = new Parser(text);
    p.space();
    Object value = p.value(0);
    p.space();
    if (p.at < text.length()) throw p.error("unexpected text after the value");
    return value;
  }

  private static final class Parser {
    final String s;
    int at;

    Parser(String s) {
      this.s = s;
    }

    IllegalArgumentException error(String what) {
      return new IllegalArgumentException("JSON: " + what + " at offset " + at);
    }

    void space() {
      while (at < s.length()) {
        char c = s.charAt(at);
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
        at++;
      }
    }

    char peek() {
      if (at >= s.length()) throw error("unexpected end");
      return s.charAt(at);
    }

    void expect(char c) {
      if (peek() != c) throw error("expected '" + c + "'");
      at++;
    }

    Object value(int depth) {
      if (depth > MAX_DEPTH) throw error("nested deeper than " + MAX_DEPTH);
      char c = peek();
      switch (c) {
        case '{': return object(depth);
        case '[': return array(depth);
        case '"': return string();
        case 't': return literal("true", Boolean.TRUE);
        case 'f': return literal("false", Boolean.FALSE);
        case 'n': return literal("null", null);
        default:
          if (c == '-' || (c >= '0' && c <= '9')) return number();
          throw error("unexpected character '" + c + "'");
      }
    }

    Object literal(String word, Object value) {
      if (!s.startsWith(word, at)) throw error("expected " + word);
      at += word.length();
      return value;
    }

    Map<String, Object> object(int depth) {
      Map<String, Object> map = new LinkedHashMap<>();
      at++;
      space();
      if (peek() == '}') {
        at++;
        return map;
      }
      for (;;) {
        space();
        if (peek() != '"') throw error("expected a string key");
        String key = string();
        space();
        expect(':');
        space();
        map.put(key, value(depth + 1));
        space();
        if (peek() == ',') {
          at++;
          continue;
        }
        expect('}');
        return map;
      }
    }

    List<Object> array(int depth) {
      List<Object> list = new ArrayList<>();
      at++;
      space();
      if (peek() == ']') {
        at++;
        return list;
      }
      for (;;) {
        space();
        list.add(value(depth + 1));
        space();
        if (peek() == ',') {
          at++;
          continue;
        }
        expect(']');
        return list;
      }
    }

    String string() {
      at++;
      StringBuilder out = new StringBuilder();
      for (;;) {
        char c = peek();
        at++;
        if (c == '"') return out.toString();
        if (c < 0x20) {
          at--;
          throw error("control character in a string");
        }
        if (c != '\\') {
          out.append(c);
          continue;
        }
        char e = peek();
        at++;
        switch (e) {
          case '"': out.append('"'); break;
          case '\\': out.append('\\'); break;
          case '/': out.append('/'); break;
          case 'b': out.append('\b'); break;
          case 'f': out.append('\f'); break;
          case 'n': out.append('\n'); break;
          case 'r': out.append('\r'); break;
          case 't': out.append('\t'); break;
          case 'u': {
            if (at + 4 > s.length()) throw error("short \\u escape");
            int code = 0;
            for (int i = 0; i < 4; i++) {
              int d = Character.digit(s.charAt(at + i), 16);
              if (d < 0) throw error("bad \\u escape");
              code = code * 16 + d;
            }
            at += 4;
            out.append((char) code);
            break;
          }
          default:
            at--;
            throw error("bad escape '\\" + e + "'");
        }
      }
    }

    Object number() {
      int start = at;
      if (s.charAt(at) == '-') at++;
      if (peek() == '0') {
        at++;
      } else if (peek() >= '1' && peek() <= '9') {
        digits();
      } else {
        throw error("expected a digit");
      }
      boolean integral = true;
      if (at < s.length() && s.charAt(at) == '.') {
        integral = false;
        at++;
        if (at >= s.length() || !isDigit(s.charAt(at))) throw error("expected a digit after '.'");
        digits();
      }
      if (at < s.length() && (s.charAt(at) == 'e' || s.charAt(at) == 'E')) {
        integral = false;
        at++;
        if (at < s.length() && (s.charAt(at) == '+' || s.charAt(at) == '-')) at++;
        if (at >= s.length() || !isDigit(s.charAt(at))) throw error("expected a digit in the exponent");
        digits();
      }
      String text = s.substring(start, at);
      if (integral) {
        try {
          return Long.parseLong(text);
        } catch (NumberFormatException tooBig) {
          // beyond a long: a double, as JavaScript (the server) reads it
        }
      }
      return Double.parseDouble(text);
    }

    void digits() {
      while (at < s.length() && isDigit(s.charAt(at))) at++;
    }

    static boolean isDigit(char c) {
      return c >= '0' && c <= '9';
    }
  }
}
