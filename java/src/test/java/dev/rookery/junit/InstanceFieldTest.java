package dev.rookery.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Registered in an instance field the extension serves one test: each test gets its own server, stopped after it. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class InstanceFieldTest {
  private static final List<String> SEEN = new ArrayList<>();

  @RegisterExtension
  RookeryExtension rookery = RookeryExtension.builder().build();

  @Test
  @Order(1)
  void theFirstTestsServer() {
    rookery.client().addMessage("INBOX", "Subject: one\r\n\r\n1\r\n");
    SEEN.add(rookery.restUrl());
  }

  @Test
  @Order(2)
  void theSecondTestGetsAnotherAndTheFirstIsStopped() {
    assertEquals(1, SEEN.size());
    assertEquals(0, rookery.client().messages("INBOX").size());
    RookeryException gone = assertThrows(RookeryException.class, () -> new RookeryClient(SEEN.get(0), null).health());
    assertEquals(0, gone.status(), "no answer at all: " + gone.getMessage());
  }
}
