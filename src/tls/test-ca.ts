/**
 * The test CA: the certificate authority that signs the certificates of
 * Rookery's TLS profiles (docs/tls.md). A suite trusts it once
 * (`ca: TEST_CA` in Node, `rookery --print-ca > ca.pem`, or
 * `GET /v1/tls/ca`) and every profile's verdict follows from what the
 * profile breaks. Fixed, valid from 2000 to 2100, so that it can be
 * trusted before any server starts; its private key is public (this file),
 * so it must never be trusted outside tests.
 */
export const TEST_CA = `-----BEGIN CERTIFICATE-----
MIIB1TCCAXygAwIBAgIQI+B8koPt001mM5S/oeYPbTAKBggqhkjOPQQDAjA4MRww
GgYDVQQKDBNSb29rZXJ5IHRlc3Qgc2VydmVyMRgwFgYDVQQDDA9Sb29rZXJ5IHRl
c3QgQ0EwIBcNMDAwMTAxMDAwMDAwWhgPMjEwMDAxMDEwMDAwMDBaMDgxHDAaBgNV
BAoME1Jvb2tlcnkgdGVzdCBzZXJ2ZXIxGDAWBgNVBAMMD1Jvb2tlcnkgdGVzdCBD
QTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABAyFB9mW5UyCg/qI4Ban3lbnq/oi
thVs72O/QG2yKdGsMX+eYHA0bQu2rtXsXIt/Odxixgq5uSBrVLTRbIMYoROjZjBk
MBIGA1UdEwEB/wQIMAYBAf8CAQEwDgYDVR0PAQH/BAQDAgEGMB0GA1UdDgQWBBRa
BK9qeRSlU2NzaCt96axVNOZbDTAfBgNVHSMEGDAWgBRaBK9qeRSlU2NzaCt96axV
NOZbDTAKBggqhkjOPQQDAgNHADBEAiBiAUhL2DIQHbOGHdfMn6LvD1hflwdZRybS
+ajFg8g8tgIgczeA+AC/Y4yY3F1yCkGpSk/mI2BVgOdPKYUSyYmEt2M=
-----END CERTIFICATE-----
`;

/** The private key of TEST_CA. Public on purpose: test use only. */
export const TEST_CA_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgbQxwRlFvy5753w4Y
Kan7DO9zZUea+bvJVqYU+oS7+aWhRANCAAQMhQfZluVMgoP6iOAWp95W56v6IrYV
bO9jv0BtsinRrDF/nmBwNG0Ltq7V7FyLfzncYsYKubkga1S00WyDGKET
-----END PRIVATE KEY-----
`;

/** The names TEST_CA was issued with: its subject is the issuer of what it signs. */
export const TEST_CA_NAME = { commonName: 'Rookery test CA', organization: 'Rookery test server' } as const;
