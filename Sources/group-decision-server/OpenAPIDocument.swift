/// The server's contract, `openapi.json` beside this file (OpenAPI 3.1), compiled into the binary
/// and served at `GET /openapi.json`.
enum OpenAPIDocument {
    static let bytes: [UInt8] = PackageResources.openapi_json
}
