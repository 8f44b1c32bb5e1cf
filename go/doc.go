// Package rookery starts a Rookery mail server (IMAP, SMTP intake, REST) for
// a Go test and gives the test its addresses and a typed client of its REST
// API.
//
//	func TestSync(t *testing.T) {
//		srv := rookery.Start(t, rookery.WithSMTP())
//		if _, err := srv.AddMessage("INBOX", "Subject: hi\r\n\r\nbody\r\n"); err != nil {
//			t.Fatal(err)
//		}
//		// connect your IMAP client to srv.IMAPAddr() (user testuser, password testpass)
//	}
//
// Start runs the `rookery` command (the single executable rookery-linux-x64,
// or the npm package's command) on free ports, waits for its --ready-json
// line and stops it when the test ends (t.Cleanup). It marks the test's start
// and end in the server's event stream, so the dashboard shows which test did
// what. With ROOKERY_KEEP=1 a failed test's server is left running; see Main.
//
// The package uses only the standard library.
package rookery
