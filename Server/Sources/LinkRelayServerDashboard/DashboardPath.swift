/// The dashboard's addresses, named once: every redirect and every address its Swift code writes
/// is made here (the routes register the same paths under `/dashboard`, relative).
enum DashboardPath {
    /// The overview.
    static let root = "/dashboard"
    static let signIn = "/dashboard/sign-in"
    static let links = "/dashboard/links"
    static let keys = "/dashboard/keys"

    /// Link `id`'s page.
    static func link(_ id: String) -> String { "\(links)/\(id)" }

    /// Link `id`'s edit form.
    static func editLink(_ id: String) -> String { link(id) + "/edit" }
}
