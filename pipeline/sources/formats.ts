/**
 * Column layouts of every raw source file, as the publishers write them. The adapters read
 * them and the generator (`pipeline/synth/`) writes them, so both sides share this one list.
 * Files live under `<raw>/<source>/`; an adapter recognises a file's kind by its header.
 */

/** National planning applications, Department of Housing ArcGIS export (CSV download). */
export const PLANNING_COLUMNS = [
  'OBJECTID',
  'PlanningAuthority',
  'ApplicationNumber',
  'DevelopmentDescription',
  'DevelopmentAddress',
  'DevelopmentPostcode',
  'ITMEasting',
  'ITMNorthing',
  'ApplicationStatus',
  'ApplicationType',
  'ApplicantForename',
  'ApplicantSurname',
  'ApplicantAddress',
  'Decision',
  'LandUseCode',
  'AreaofSite',
  'NumResidentialUnits',
  'OneOffKPI',
  'OneOffHouse',
  'FloorArea',
  'ReceivedDate',
  'WithdrawnDate',
  'DecisionDate',
  'DecisionDueDate',
  'GrantDate',
  'ExpiryDate',
  'AppealRefNumber',
  'AppealStatus',
  'AppealDecision',
  'AppealDecisionDate',
  'AppealSubmittedDate',
  'FIRequestDate',
  'FIRecDate',
  'LinkAppDetails',
  'ETL_DATE',
  'SiteId',
] as const;

/**
 * BCMS commencement notices. The national file has 99 columns; these are the ones the pipeline
 * reads (extra columns are ignored). Builder columns carry the appointed main contractor.
 */
export const COMMENCEMENT_COLUMNS = [
  'CN_Number',
  'CN_Planning_Permission_Number',
  'CN_Project_Name',
  'CN_Description_proposed_development',
  'CN_Project_type',
  'CN_Activity_Type',
  'CN_Date_Granted',
  'CN_Date_Submitted_or_Received',
  'CN_Commencement_Date',
  'CN_Proposed_end_date',
  'CN_Units_for_phase',
  'CN_Phase_for_this_Notice',
  'CN_Total_Number_of_Dwelling_Units',
  'CN_Street',
  'CN_Town',
  'CN_Eircode',
  'CN_County',
  'CN_LAT',
  'CN_LNG',
  'CN_Validation_Date',
  'CN_Validation_Status',
  'CN_Not_Commenced',
  'CN_Sub_Group',
  'Opt_Out_Comm_Notice',
  'CN_Builder_Name',
  'CN_Builder_Company_Number',
  'CN_Owner_Name',
  'CN_Owner_Phone',
  'CCC_Number',
  'CCC_Date_Validated',
  'CCC_Type_of_Completion_Certificate',
  'CCC_Units_Completed',
  'LocalAuthority',
] as const;

/** Property Price Register, current header (since the Eircode column was added). */
export const PPR_COLUMNS_CURRENT = [
  'Date of Sale (dd/mm/yyyy)',
  'Address',
  'County',
  'Eircode',
  'Price (€)',
  'Not Full Market Price',
  'VAT Exclusive',
  'Description of Property',
  'Property Size Description',
] as const;

/** Property Price Register, older header (`Postal Code` after `Address`). */
export const PPR_COLUMNS_OLD = [
  'Date of Sale (dd/mm/yyyy)',
  'Address',
  'Postal Code',
  'County',
  'Price (€)',
  'Not Full Market Price',
  'VAT Exclusive',
  'Description of Property',
  'Property Size Description',
] as const;

/** CRO open-data company extract. */
export const CRO_COMPANY_COLUMNS = [
  'company_num',
  'company_name',
  'company_status_code',
  'company_status',
  'company_type_code',
  'company_type',
  'company_reg_date',
  'last_ar_date',
  'company_address_1',
  'company_address_2',
  'company_address_3',
  'company_address_4',
  'comp_dissolved_date',
  'nard',
  'last_accounts_date',
  'company_status_date',
  'nace_v2_code',
  'eircode',
  'company_name_eff_date',
  'company_type_eff_date',
  'princ_object_code',
] as const;

/** CRO filings history (one row per document filed). */
export const CRO_FILING_COLUMNS = [
  'company_num',
  'document_number',
  'filing_type',
  'filing_description',
  'received_date',
  'effective_date',
] as const;

/** National consenting-body (An Bord Pleanála / An Coimisiún Pleanála) cases. */
export const ABP_CASE_COLUMNS = [
  'ABPCASEID',
  'DEVDESC',
  'DEVADDRESS',
  'LODGEDON',
  'DECISION',
  'DECIDED_ON',
  'LINKABPWEB',
  'PLANINGATY',
  'CATEGORY',
] as const;

/** Renewable Electricity Support Scheme auction results (one row per successful project). */
export const AUCTION_COLUMNS = [
  'Auction',
  'Project ID',
  'Project Name',
  'Technology',
  'Capacity (MW)',
  'Company',
  'County',
  'Community Project',
  'Strike Price (EUR/MWh)',
] as const;

/**
 * Grid connection list. The first seven columns are those of the system operator's published
 * wind and solar lists; the last three are present in the full connection list only.
 */
export const GRID_CONNECTION_COLUMNS = [
  'Name',
  'Capacity (MW)',
  'Connection date',
  'Region',
  'ROI/NI',
  'Latitude',
  'Longitude',
  'Connection Voltage (kV)',
  'County',
  'Technology',
] as const;

/** Data-centre schemes register. */
export const DATA_CENTRE_COLUMNS = [
  'Scheme Name',
  'Operator',
  'Planning Authority',
  'Planning Reference',
  'County',
  'Latitude',
  'Longitude',
  'Demand (MW)',
  'Status',
  'Lodged Date',
  'Connection Voltage (kV)',
  'CRU Connection Policy',
] as const;

/**
 * Residential rents: the rent index of the Residential Tenancies Board as the Central Statistics
 * Office publishes it (PxStat table RIQ02 "RTB Average Monthly Rent Report", CSV download). The
 * `C…V…` columns are PxStat's classification codes beside each label column; their codes change
 * between tables, so the adapter matches the label columns only.
 */
export const RENT_COLUMNS = [
  'STATISTIC',
  'Statistic Label',
  'TLIST(Q1)',
  'Quarter',
  'C02970V03592',
  'Number of Bedrooms',
  'C02969V03591',
  'Property Type',
  'C03004V03625',
  'Location',
  'UNIT',
  'VALUE',
] as const;
/** The RIQ02 columns a rents file must have (labels, not PxStat's per-table codes). */
export const RENT_REQUIRED = [
  'Statistic Label',
  'TLIST(Q1)',
  'Number of Bedrooms',
  'Property Type',
  'Location',
  'UNIT',
  'VALUE',
] as const;

/**
 * Building-material wholesale prices: CSO PxStat table WPM28 "Wholesale Price Index (Excl VAT)
 * for Building and Construction Materials" (base 2015 = 100), CSV download. The table carries
 * two statistics per material and month: the index and its 12-month percentage change.
 */
export const MATERIAL_COLUMNS = [
  'STATISTIC',
  'Statistic Label',
  'TLIST(M1)',
  'Month',
  'C01409V03262',
  'Type of Material',
  'UNIT',
  'VALUE',
] as const;
/** The WPM28 columns a materials file must have. */
export const MATERIAL_REQUIRED = [
  'STATISTIC',
  'Statistic Label',
  'TLIST(M1)',
  'Type of Material',
  'UNIT',
  'VALUE',
] as const;

/** The sources `leads ingest` and `leads refresh` know, each a folder under the raw dir. */
export const SOURCE_NAMES = [
  'planning',
  'commencements',
  'ppr',
  'companies',
  'infrastructure',
  'rents',
  'materials',
] as const;
export type SourceName = (typeof SOURCE_NAMES)[number];
