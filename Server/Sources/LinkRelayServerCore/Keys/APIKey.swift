import Crypto
import Foundation

/// What a key may do.
package enum KeyScope: String, Sendable, Hashable, Codable, CaseIterable {
    /// What an app's SDK needs: install, resolve, events, creating share links. Safe to ship in
    /// an app.
    case sdk
    /// Everything: links, apps and keys. Never ship it in an app.
    case admin
}

/// A stored key: its public prefix and the SHA-256 of its secret, never the secret itself.
package struct APIKeyRecord: Sendable, Hashable, Codable {
    /// A random identifier (`key_…`).
    package var id: String
    /// The project the key belongs to.
    package var projectID: String
    /// The key's first part (`lr_sdk_ab12cd34`), shown in lists and logs, enough to find it.
    package var prefix: String
    /// The hex SHA-256 of the whole key.
    package var secretHash: String
    /// What it may do.
    package var scope: KeyScope
    /// A name for people (`iOS app`, `CI`).
    package var name: String
    /// When it was created.
    package var createdAt: Date
    /// When it was revoked; `nil` while it works.
    package var revokedAt: Date?

    /// A record; see each property.
    package init(
        id: String, projectID: String, prefix: String, secretHash: String, scope: KeyScope, name: String, createdAt: Date,
        revokedAt: Date? = nil
    ) {
        self.id = id
        self.projectID = projectID
        self.prefix = prefix
        self.secretHash = secretHash
        self.scope = scope
        self.name = name
        self.createdAt = createdAt.storedPrecision
        self.revokedAt = revokedAt?.storedPrecision
    }
}

/// A key as made: the secret, shown once, and the record stored for it.
package struct IssuedKey: Sendable {
    /// The whole key (`lr_sdk_ab12cd34_…`): shown once, stored nowhere.
    package let secret: String
    /// What is stored.
    package let record: APIKeyRecord
}

/// Making keys and checking them. A key is `lr_{scope}_{8 hex}_{32 random base62}`: the part up
/// to the second underscore is its public prefix, the random part carries 190 bits, so a plain
/// SHA-256 is the right hash (a slow password hash protects low-entropy secrets; these are not).
package enum APIKeys {
    /// The most characters (Unicode scalars, ``TextLimit``) a key's name holds.
    package static let maxNameLength = 100

    /// A new key for `project` with `scope`.
    package static func issue(project: String, scope: KeyScope, name: String, at date: Date) -> IssuedKey {
        let prefix = "lr_\(scope.rawValue)_\(randomString(8, alphabet: hexDigits))"
        let secret = prefix + "_" + randomString(32, alphabet: base62)
        let record = APIKeyRecord(
            id: "key_" + randomString(16, alphabet: base62), projectID: project, prefix: prefix, secretHash: hash(secret),
            scope: scope, name: name, createdAt: date)
        return IssuedKey(secret: secret, record: record)
    }

    /// The public prefix of `secret`, or `nil` when it is not shaped like a key.
    package static func prefix(of secret: String) -> String? {
        let parts = secret.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "lr", KeyScope(rawValue: String(parts[1])) != nil, parts[2].count == 8,
            parts[3].count == 32
        else { return nil }
        return parts[0...2].joined(separator: "_")
    }

    /// The hex SHA-256 of `secret`.
    package static func hash(_ secret: String) -> String {
        sha256Hex(secret)
    }

    /// Whether `secret` is the key `record` was made for, compared in constant time (every
    /// byte of both hashes is read, whatever differs first).
    package static func matches(_ secret: String, _ record: APIKeyRecord) -> Bool {
        let presented = Array(hash(secret).utf8)
        let stored = Array(record.secretHash.utf8)
        guard presented.count == stored.count else { return false }
        var difference: UInt8 = 0
        for index in presented.indices { difference |= presented[index] ^ stored[index] }
        return difference == 0
    }

    static let hexDigits = Array("0123456789abcdef")
    package static let base62 = Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

    /// `count` characters from `alphabet`, each from the system's secure generator without
    /// modulo bias.
    package static func randomString(_ count: Int, alphabet: [Character]) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }
}

/// The lower-case hex SHA-256 of `text`'s UTF-8: the one digest the server makes (key hashes,
/// fingerprint hashes, de-duplication keys), written without a formatter per byte.
package func sha256Hex(_ text: String) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var hex = [UInt8]()
    hex.reserveCapacity(64)
    for byte in SHA256.hash(data: Data(text.utf8)) {
        hex.append(digits[Int(byte >> 4)])
        hex.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: hex, as: UTF8.self)
}
