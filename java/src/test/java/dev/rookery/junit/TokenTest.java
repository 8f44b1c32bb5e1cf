package dev.rookery.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** With a token the server wants it on every request, and the extension's client sends it. */
class TokenTest {
  @RegisterExtension
  static RookeryExtension rookery = RookeryExtension.builder().token("junit-token").build();

  @Test
  void theClientSendsTheToken() {
    assertEquals(true, rookery.client().health().get("ok"));
  }

  @Test
  void aClientWithoutItIsRefused() {
    RookeryException err = assertThrows(RookeryException.class, () -> new RookeryClient(rookery.restUrl(), null).health());
    assertEquals(401, err.status());
    assertEquals("UNAUTHORIZED", err.code());
  }
}
