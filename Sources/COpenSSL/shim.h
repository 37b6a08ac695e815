// The parts of the system libcrypto (OpenSSL 3) that AppStoreGroups uses on Linux to sign ES256
// tokens: loading a DER private key, ECDSA over SHA-256, and the DER signature's R and S.
#ifndef APP_STORE_GROUPS_COPENSSL_SHIM_H
#define APP_STORE_GROUPS_COPENSSL_SHIM_H

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#endif
