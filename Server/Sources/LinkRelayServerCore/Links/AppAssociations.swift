import LinkRelay

/// The files that tie the apps to the server's domain, served at `/.well-known/`: Apple's
/// `apple-app-site-association` (universal links, App Clips) and Android's `assetlinks.json`
/// (verified app links). Both are JSON by definition; the dashboard shows them as served.
package enum AppAssociations {
    /// The association file for `registered` apps: the iOS apps' paths, the App Clips.
    package static func apple(_ registered: [AppRecord]) -> JSONValue {
        let apps = registered.filter { $0.platform == .ios }
        let clips = registered.filter { $0.platform == .appClip }.map { JSONValue.string($0.identifier) }
        let details: [JSONValue] = apps.map { app in
            [
                "appIDs": [.string(app.identifier)], "appID": .string(app.identifier),
                "components": .array(app.paths.map { ["/": .string($0)] }), "paths": .array(app.paths.map(JSONValue.string)),
            ]
        }
        var file: [String: JSONValue] = ["applinks": ["apps": [], "details": .array(details)]]
        if !clips.isEmpty { file["appclips"] = ["apps": .array(clips)] }
        return .object(file)
    }

    /// The Digital Asset Links statements for `registered` Android apps.
    package static func android(_ registered: [AppRecord]) -> [JSONValue] {
        let apps = registered.filter { $0.platform == .android }
        let statements: [JSONValue] = apps.map { app in
            [
                "relation": ["delegate_permission/common.handle_all_urls"],
                "target": [
                    "namespace": "android_app", "package_name": .string(app.identifier),
                    "sha256_cert_fingerprints": .array(app.certificateFingerprints.map(JSONValue.string)),
                ],
            ]
        }
        return statements
    }
}
